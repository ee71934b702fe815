import { TritonLlmError } from '@trtllm/sdk';
import { expect } from 'vitest';

/** The `TritonLlmError` that `call` (a promise, or a function to run) fails with; the test fails if it succeeds. */
export async function failure(call: Promise<unknown> | (() => Promise<unknown>)): Promise<TritonLlmError> {
  try {
    await (typeof call === 'function' ? call() : call);
  } catch (err) {
    expect(err).toBeInstanceOf(TritonLlmError);
    return err as TritonLlmError;
  }
  throw new Error('expected the call to fail');
}
