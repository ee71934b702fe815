import { randomUUID } from 'node:crypto';

let nextRequest = Math.floor(Math.random() * 1_000_000_000);

/**
 * A Triton request id. Numeric, as the TensorRT-LLM stop path expects, and chosen here rather
 * than by the SDK so the server can name its upstream requests in the `x-request-id` header.
 */
export function tritonRequestId(): string {
  nextRequest = (nextRequest + 1) % Number.MAX_SAFE_INTEGER;
  return String(nextRequest);
}

/** A random UUID's 32 hex digits, its dashes (8-4-4-4-12) cut out by slices: `replaceAll` cost more than the UUID. */
function uuidHex(): string {
  const u = randomUUID();
  return u.slice(0, 8) + u.slice(9, 13) + u.slice(14, 18) + u.slice(19, 23) + u.slice(24);
}

/** An OpenAI-style response id such as `chatcmpl-…` or `cmpl-…`. */
export function responseId(prefix: 'cmpl' | 'chatcmpl'): string {
  return `${prefix}-${uuidHex()}`;
}

/** Seconds since the epoch, as OpenAI's `created` fields are. */
export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A tool call id in OpenAI's `call_…` form; clients echo it back in the `tool` message that answers the call. */
export function toolCallId(): string {
  return `call_${uuidHex().slice(0, 24)}`;
}
