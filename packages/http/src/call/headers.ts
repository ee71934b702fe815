import { TritonLlmError } from '@trtllm/sdk';

// RFC 9110 token characters.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// CR and LF would let a value inject further headers; NUL is refused by every HTTP stack.
const FORBIDDEN_IN_VALUE = /[\r\n\0]/;

/**
 * Checks user headers before anything is sent. Messages name the header but never show its value:
 * values are often credentials.
 */
export function checkHeaders(
  headers: Readonly<Record<string, string>> | undefined,
  field: string,
): ReadonlyArray<readonly [string, string]> {
  if (headers === undefined) return [];
  if (typeof headers !== 'object' || headers === null) {
    throw new TritonLlmError(
      'invalid_argument',
      `${field}: must be an object of header names to string values`,
    );
  }
  return Object.entries(headers).map(([name, value]) => {
    if (!HEADER_NAME.test(name)) {
      throw new TritonLlmError(
        'invalid_argument',
        `${field}: ${JSON.stringify(name.slice(0, 60))} is not a valid HTTP header name`,
      );
    }
    if (typeof value !== 'string') {
      throw new TritonLlmError(
        'invalid_argument',
        `${field}: the value of header '${name}' must be a string`,
      );
    }
    if (FORBIDDEN_IN_VALUE.test(value)) {
      throw new TritonLlmError(
        'invalid_argument',
        `${field}: the value of header '${name}' contains CR, LF or NUL and was refused (value not shown)`,
      );
    }
    return [name, value] as const;
  });
}

/** Static headers, then per-call ones (same name: the call wins), then the protocol's own. */
export function mergeHeaders(...layers: ReadonlyArray<ReadonlyArray<readonly [string, string]>>): Headers {
  const merged = new Headers();
  for (const layer of layers) for (const [name, value] of layer) merged.set(name, value);
  return merged;
}
