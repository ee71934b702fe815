import { TritonLlmError } from '@trtllm/sdk';
import { protocolError } from '../errors.js';
import type { Call } from './call.js';

/** The error for a response larger than `maxResponseBytes`. */
export function tooLarge(call: Call, limit: number): TritonLlmError {
  // A local limit fails the same way again, so it is not worth retrying.
  return new TritonLlmError(
    'resource_exhausted',
    `${call.context.what}: the response exceeds maxResponseBytes (${limit} bytes)`,
    { retryable: false },
  );
}

/**
 * Reads a whole body, refusing one larger than `limit` as soon as it is known to be (from
 * Content-Length, or while reading) and closing the connection then.
 */
export async function readBytes(
  response: Response,
  call: Call,
  limit: number | undefined,
): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (limit !== undefined && declared > limit) {
    call.abort('cancelled');
    throw tooLarge(call, limit);
  }
  if (response.body === null) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (limit !== undefined && total > limit) {
        // Cancelling the reader closes the connection; the error below is the reason.
        await reader.cancel().catch(() => undefined);
        throw tooLarge(call, limit);
      }
      chunks.push(value);
    }
  } catch (err) {
    throw call.failure(err);
  } finally {
    reader.releaseLock();
  }
  return concat(chunks, total);
}

export async function readText(response: Response, call: Call, limit: number | undefined): Promise<string> {
  return new TextDecoder().decode(await readBytes(response, call, limit));
}

/** Reads and parses a JSON body; a body that is not JSON is a `protocol` error. */
export async function readJson(response: Response, call: Call, limit: number | undefined): Promise<unknown> {
  const text = await readText(response, call, limit);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw protocolError(`expected a JSON body, got ${describeText(text)}`, call.context, err);
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
