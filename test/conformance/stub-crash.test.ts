import { execFileSync } from 'node:child_process';
import { TritonLlm } from '@trtllm/sdk';
import { generateTokens } from '@trtllm/testing';
import { describe, expect, inject, it } from 'vitest';
import { REAL_SKIPPED, useServer } from './servers.js';
import { crashLines, nextTry } from './stub-crash.js';
import { requirePid, tritonFiles } from './triton-process.js';

const INPUT = [259, 260];
// What Triton 2.51 wrote when it aborted on a dead stub's lock in CI (2026-11-30).
const ABORT = "terminate called after throwing an instance of 'boost::interprocess::lock_exception'";

describe('the retry of a case under which a Python stub died', () => {
  it('runs a first try as it is', () => {
    expect(nextTry(0, [])).toBe('first');
  });

  it('restarts the server first when a stub died since the last try began, or before the first', () => {
    const death = ["the stub of 'tensorrt_llm' (pid 4242) is gone"];
    expect(nextTry(1, death)).toBe('restart');
    expect(nextTry(0, death)).toBe('restart');
  });

  it("reads a server's own abort in its log", () => {
    expect(crashLines(`I1130 model loaded\n${ABORT}\nI1130 next\n`)).toEqual([ABORT]);
  });

  it('keeps the failure of a case that failed for another reason, and says so', () => {
    const verdict = nextTry(1, []);
    expect(verdict).toBeInstanceOf(Error);
    expect((verdict as Error).message).toContain(
      'failed with no Python stub of the real Triton dying during it',
    );
  });
});

/** The pid of the shared server's stub for `model` (other servers on other ports have stubs of their own). */
function stubPid(model: string): number {
  const real = inject('realTriton');
  if ('unavailable' in real) throw new Error(real.unavailable);
  const server = String(requirePid(tritonFiles(new URL(real.httpUrl).port).pidFile));
  const pids = execFileSync('pgrep', ['-P', server, '-f', `models/${model}/1/model.py`], { encoding: 'utf8' })
    .trim()
    .split('\n');
  expect(pids).toHaveLength(1);
  return Number(pids[0]);
}

describe.skipIf(REAL_SKIPPED)('a Python stub of the real Triton killed under a case', () => {
  const server = useServer('real');

  it('fails the first try, then passes on a restarted server', { timeout: 120_000 }, async ({ task }) => {
    const llm = new TritonLlm({ transport: server().transport('grpc'), model: 'tensorrt_llm' });
    const expected = generateTokens(INPUT, { maxTokens: 4 })[0]!.tokens;
    if ((task.result?.retryCount ?? 0) === 0) {
      // SIGSEGV, as the heap corruption ends it.
      process.kill(stubPid('tensorrt_llm'), 'SIGSEGV');
      // The model's stub is gone: this request fails (or gives up after 10 s), so the try fails.
      const result = await llm.generate({ inputIds: INPUT, maxTokens: 4 }, { timeoutMs: 10_000 });
      expect.fail(`a request to a dead stub was answered: ${JSON.stringify(result.sequences[0]?.tokenIds)}`);
    }
    const result = await llm.generate({ inputIds: INPUT, maxTokens: 4 }, { timeoutMs: 10_000 });
    expect(result.sequences[0]?.tokenIds).toEqual(expected);
    expect(task.result?.retryCount).toBe(1);
  });
});
