import { TritonLlmError } from '@trtllm/sdk';

// RFC 9110 token characters: what HTTP/2 accepts as a header name.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// CR, LF and NUL could end a header; a character past U+00FF has no octet of its own (header
// blocks are latin1, see the HPACK of h2/), which the Fetch API's Headers refuses too.
const FORBIDDEN_IN_VALUE = /[\r\n\0\u0100-\uffff]/;
// What the Fetch API's Headers trims from the ends of a value (CR and LF are refused above).
const EDGE_SPACE = /^[\t ]+|[\t ]+$/g;

/** The metadata of one call: header names in lower case, as HTTP/2 sends them, and their values. */
export type CallMetadata = Record<string, string>;

/**
 * The metadata of one call: the transport's static headers overridden by the call's own, names
 * in lower case and values trimmed as the Fetch API's `Headers` has them. A plain object, not a
 * `Headers`: the first `Headers` of a process loads Node's fetch implementation (undici), tens of
 * milliseconds of a script's start that no gRPC call needs (issue #53).
 * Refuses names that are not HTTP tokens and values with CR, LF, NUL or a character past U+00FF
 * before anything is sent. Error messages name the header but never show its value, which may be
 * a credential.
 */
export function callHeaders(
  base: Readonly<Record<string, string>> | undefined,
  perCall: Readonly<Record<string, string>> | undefined,
  field: string,
): CallMetadata {
  // No prototype: a header named `__proto__` stays a header.
  const headers: CallMetadata = Object.create(null);
  for (const [source, entries] of [
    ['headers', base],
    [field, perCall],
  ] as const) {
    if (entries === undefined) continue;
    for (const [name, value] of Object.entries(entries)) {
      if (!HEADER_NAME.test(name)) {
        throw new TritonLlmError(
          'invalid_argument',
          `${source}: ${JSON.stringify(name)} is not a valid header name`,
        );
      }
      if (typeof value !== 'string' || FORBIDDEN_IN_VALUE.test(value)) {
        throw new TritonLlmError(
          'invalid_argument',
          `${source}.${name}: the value must be a string of characters up to U+00FF without CR, LF or NUL (value not shown)`,
        );
      }
      headers[name.toLowerCase()] = value.replace(EDGE_SPACE, '');
    }
  }
  return headers;
}

/**
 * The HTTP/2 request headers of a gRPC call: gRPC's own (content type, `te: trailers`, user agent,
 * accepted encodings) and the caller's metadata, which may not replace the protocol's.
 */
export function requestHeaders(metadata: Readonly<CallMetadata>, gzip: boolean): CallMetadata {
  const out: CallMetadata = { 'user-agent': USER_AGENT, ...metadata };
  out['content-type'] = 'application/grpc+proto';
  out.te = 'trailers';
  // Requests of 1 KiB and more go compressed (each message says so in its flag), so the call
  // declares gzip up front.
  if (gzip) {
    out['grpc-encoding'] = 'gzip';
    out['grpc-accept-encoding'] = 'gzip';
  } else {
    delete out['grpc-encoding'];
    delete out['grpc-accept-encoding'];
  }
  return out;
}

const USER_AGENT = 'trtllm-sdk-grpc';

// grpc-timeout carries at most 8 digits (gRPC over HTTP/2, "Timeout"): the finest unit that fits.
const TIMEOUT_UNITS: ReadonlyArray<readonly [string, number]> = [
  ['m', 1],
  ['S', 1_000],
  ['M', 60_000],
  ['H', 3_600_000],
];

/** A deadline in milliseconds as a `grpc-timeout` value (rounded up, so it never comes early). */
export function grpcTimeout(timeoutMs: number): string {
  for (const [unit, ms] of TIMEOUT_UNITS) {
    const value = Math.ceil(timeoutMs / ms);
    if (value <= 99_999_999) return `${value}${unit}`;
  }
  return '99999999H';
}
