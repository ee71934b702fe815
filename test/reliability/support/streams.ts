import { type StreamChunk, TritonLlmError } from '@trtllm/sdk';
import { generateTokens } from '@trtllm/testing';

/** What a consumer got from a stream: every chunk in order, and the error that ended it, if any. */
export interface Drained {
  readonly chunks: StreamChunk[];
  /** Token ids of the delta chunks, in order. */
  readonly tokens: number[];
  readonly error: TritonLlmError | undefined;
}

/** Reads a stream to its end; anything thrown that is not a `TritonLlmError` fails the test. */
export async function drain(stream: AsyncIterable<StreamChunk>): Promise<Drained> {
  const chunks: StreamChunk[] = [];
  const tokens: number[] = [];
  try {
    for await (const chunk of stream) {
      chunks.push(chunk);
      if (!chunk.done) tokens.push(...chunk.tokenIds);
    }
  } catch (err) {
    if (!(err instanceof TritonLlmError)) throw err;
    return { chunks, tokens, error: err };
  }
  return { chunks, tokens, error: undefined };
}

/** The ids the deterministic generator produces for `inputIds` (GENERATOR.md). */
export function expectedIds(inputIds: readonly number[], maxTokens: number): number[] {
  return [...(generateTokens(inputIds, { maxTokens })[0]?.tokens ?? [])];
}

/** The error `promise` rejects with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}
