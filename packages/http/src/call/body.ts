import { TritonLlmError } from '@trtllm/sdk';
import type { ErrorContext } from '../errors.js';
import { protocolError } from '../errors.js';

/**
 * The error for an answer larger than `maxResponseBytes`: `subject` says which part (the response,
 * one event, an announced chunk). It names the setting that raises the limit.
 */
export function tooLarge(context: ErrorContext, limit: number, subject = 'the response'): TritonLlmError {
  // A local limit fails the same way again, so it is not worth retrying.
  return new TritonLlmError(
    'resource_exhausted',
    `${context.what}: ${subject} exceeds maxResponseBytes (${limit} bytes); ` +
      'raise httpTransport({ maxResponseBytes }) for larger answers',
    {
      retryable: false,
      ...(context.requestId !== undefined && context.requestId !== ''
        ? { requestId: context.requestId }
        : {}),
      ...(context.model !== undefined ? { model: context.model } : {}),
    },
  );
}

const utf8 = new TextDecoder();

export function textOf(bytes: Uint8Array): string {
  return utf8.decode(bytes);
}

/** Parses a JSON body; a body that is not JSON is a `protocol` error. */
export function jsonOf(bytes: Uint8Array, context: ErrorContext): unknown {
  const text = textOf(bytes);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw protocolError(`expected a JSON body, got ${describeText(text)}`, context, err);
  }
}

export function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

export function describeText(text: string): string {
  if (text.trim() === '') return 'an empty body';
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}
