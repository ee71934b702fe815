import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type StreamChunk, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { generateTokens } from '@trtllm/testing';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type Protocol, REAL_SKIPPED, useServer } from './servers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PIDFILE = `${ROOT}/build/triton-${process.env.TRITON_HTTP_PORT ?? '18000'}.pid`;
const INPUT = [259, 260];
const execFileAsync = promisify(execFile);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Kills the real Triton (and its Python stub processes) the way a crash would: SIGKILL, no goodbye.
 * scripts/triton-down.sh does it, and then removes the shared memory the killed server leaves behind.
 */
async function killTriton(): Promise<void> {
  await execFileAsync('bash', ['scripts/triton-down.sh'], {
    cwd: ROOT,
    env: { ...process.env, TRITON_DOWN_SIGNAL: 'KILL' },
  });
}

/** Starts the real Triton again on the same ports with the same event log, as the global setup did. */
function startTriton(): void {
  const real = inject('realTriton');
  if ('unavailable' in real) return;
  execFileSync('bash', ['scripts/triton-up.sh'], {
    cwd: ROOT,
    env: {
      ...process.env,
      TRITON_HTTP_PORT: new URL(real.httpUrl).port,
      TRITON_GRPC_PORT: new URL(real.grpcUrl).port,
      TRTLLM_FAKE_EVENT_LOG: real.eventLog,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

function tritonRunning(): boolean {
  try {
    return alive(Number(readFileSync(PIDFILE, 'utf8').trim()));
  } catch {
    return false;
  }
}

// The real server is shared by the whole conformance run: whatever happens here, it is running
// again when this file ends.
describe.skipIf(REAL_SKIPPED)('the real Triton killed and restarted', () => {
  const server = useServer('real');

  afterAll(() => {
    if (!tritonRunning()) startTriton();
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
          if (got[i]!.length === 5 && ++started === protocols.length) killed = killTriton();
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

    startTriton();
    for (const llm of clients) {
      const result = await llm.generate({ inputIds: INPUT, maxTokens: 8 });
      expect(result.sequences[0]?.tokenIds).toEqual(expected.slice(0, 8));
    }
  });
});
