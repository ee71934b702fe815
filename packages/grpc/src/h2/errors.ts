import { type ErrorCode, TritonLlmError } from '@trtllm/sdk';
import { H2_PROTOCOL_ERROR, h2ErrorName } from './frames.js';

/**
 * A rule of HTTP/2 the peer broke, found while reading its frames. The connection ends with GOAWAY
 * `h2Code`, and every stream on it fails with the error of {@link violationError}.
 */
export class H2Violation extends Error {
  constructor(
    readonly h2Code: number,
    message: string,
    /** The SDK's code for it: `protocol` unless the peer only went past a limit of ours. */
    readonly errorCode: ErrorCode = 'protocol',
  ) {
    super(message);
  }
}

export function violation(message: string, h2Code = H2_PROTOCOL_ERROR): H2Violation {
  return new H2Violation(h2Code, message);
}

/** Where a connection went, as messages name it (never with credentials: the URL has none). */
export function origin(url: URL): string {
  return url.origin;
}

export function violationError(url: URL, v: H2Violation): TritonLlmError {
  const what =
    v.errorCode === 'resource_exhausted' ? 'went past a limit of this client' : 'broke the HTTP/2 protocol';
  return new TritonLlmError(
    v.errorCode,
    `the server at ${origin(url)} ${what}: ${v.message}; the connection was closed (GOAWAY ${h2ErrorName(v.h2Code)})`,
    { retryable: false, cause: v },
  );
}

/** The peer is reachable but does not speak gRPC over HTTP/2 (a wrong port, an HTTP/1.1 proxy). */
export function notGrpcEndpoint(url: URL, what: string): TritonLlmError {
  return new TritonLlmError(
    'unavailable',
    `the server at ${origin(url)} ${what}; this is not a gRPC endpoint (Triton listens for gRPC on 8001 and ` +
      'HTTP on 8000 by default; use httpTransport for HTTP)',
    // The fact as data: a front end names its own setting from it instead of httpTransport (issue 53).
    { retryable: false, endpointProtocol: 'http' },
  );
}

/** The connection ended under its streams without a violation of ours to report. */
export function connectionLost(url: URL, detail: string, cause?: unknown): TritonLlmError {
  return new TritonLlmError('unavailable', `the connection to ${origin(url)} was lost: ${detail}`, {
    ...(cause !== undefined ? { cause } : {}),
  });
}

/** GOAWAY with an error code: the server (or a proxy) ended the connection, saying why. */
export function goawayError(url: URL, code: number, debug: string): TritonLlmError {
  const said = debug === '' ? '' : ` "${debug}"`;
  return new TritonLlmError(
    'unavailable',
    `the server at ${origin(url)} (or a proxy in front of it) ended the connection: GOAWAY ${h2ErrorName(code)}${said}`,
  );
}

/** What a TLS server that does not offer HTTP/2 is told apart by. */
export const NO_ALPN_H2 = 'refused HTTP/2 over TLS (it offers no ALPN h2: TLS alert no_application_protocol)';

/**
 * Whether a socket error is a TLS server's refusal of ALPN h2 (alert 120): recent Node servers
 * end the handshake so, instead of completing it without a protocol.
 */
export function noAlpnH2(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  return (
    e?.code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL' ||
    (typeof e?.message === 'string' && e.message.includes('alert no application protocol'))
  );
}
