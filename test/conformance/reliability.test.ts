import { type StreamChunk, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { generateTokens } from '@trtllm/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { type Protocol, REAL_SKIPPED, useServer } from './servers.js';
import { sharedTriton } from './shared-triton.js';

const INPUT = [259, 260];

/**
 * The shared real Triton, killed the way a crash would (SIGKILL, no goodbye) and started again on the
 * same ports with the same event log, as the global setup did.
 */
const triton = sharedTriton();

// The real server is shared by the whole conformance run: whatever happens here, it is running
// again when this file ends.
describe.skipIf(REAL_SKIPPED)('the real Triton killed and restarted', () => {
  const server = useServer('real');

  afterAll(() => {
    if (triton !== undefined && !triton.running()) triton.start();
  });

  it('streams over gRPC and HTTP end in unavailable after their chunks; the same clients work after a restart', {
    timeout: 120_000,
  }, async () => {
    const protocols: Protocol[] = ['grpc', 'http'];
    const clients = protocols.map(
      (p) => new TritonLlm({ transport: server().transport(p), model: 'tensorrt_llm' }),
    );
    await Promise.all(clients.map((c) => c.schema()));
    const expected = [...generateTokens(INPUT, { maxTokens: 3000 })[0]!.tokens];
    const got = protocols.map(() => [] as number[]);
    let started = 0;
    let killed: Promise<void> | undefined;
    const outcomes = clients.map(async (llm, i) => {
      // Were the kill not noticed, the idle timeout would end the stream with deadline_exceeded.
      const stream: AsyncIterable<StreamChunk> = llm.stream(
        { inputIds: INPUT, maxTokens: 3000 },
        { idleTimeoutMs: 3000 },
      );
      try {
        for await (const chunk of stream) {
          if (chunk.done) continue;
          got[i]!.push(...chunk.tokenIds);
          if (got[i]!.length === 5 && ++started === protocols.length) killed = triton?.kill();
        }
      } catch (err) {
        return err;
      }
      return undefined;
    });
    const errors = await Promise.all(outcomes);
    await killed;
    for (const [i, err] of errors.entries()) {
      expect(err, protocols[i]).toBeInstanceOf(TritonLlmError);
      expect((err as TritonLlmError).code, protocols[i]).toBe('unavailable');
      expect(got[i]!.length).toBeGreaterThanOrEqual(5);
      expect(got[i]).toEqual(expected.slice(0, got[i]!.length));
    }

    triton?.start();
    for (const llm of clients) {
      const result = await llm.generate({ inputIds: INPUT, maxTokens: 8 });
      expect(result.sequences[0]?.tokenIds).toEqual(expected.slice(0, 8));
    }
  });
});
