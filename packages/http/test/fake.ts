import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/** A fake Triton for the file's tests, its log and faults reset before each test. */
export function useFakeTriton(options: { itlMs?: number; cors?: boolean } = {}): () => FakeTriton {
  let fake: FakeTriton | undefined;
  beforeAll(async () => {
    fake = await startFakeTriton({ grpcPort: 0, httpPort: 0, ...options });
  });
  afterAll(async () => {
    await fake?.close();
  });
  beforeEach(() => {
    fake?.clearEvents();
    fake?.setFaults(undefined);
  });
  return () => {
    if (fake === undefined) throw new Error('the fake Triton is not running');
    return fake;
  };
}
