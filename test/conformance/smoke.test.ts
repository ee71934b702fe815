import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { REAL_SKIPPED } from './servers.js';

// test/triton/smoke.py checks every stand-in model against its own reading of GENERATOR.md, over
// HTTP and a little gRPC. Run here against the suite's real Triton, so a stand-in (or a check) that
// drifts from the generator fails CI instead of waiting for someone to run the script by hand.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SMOKE = `${ROOT}test/triton/smoke.py`;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function runSmoke(args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      'python3',
      [SMOKE, ...args],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe.skipIf(REAL_SKIPPED)('smoke.py on the real Triton', () => {
  it('passes every check of the script', { timeout: 120_000 }, async () => {
    const real = inject('realTriton');
    if ('unavailable' in real) throw new Error(real.unavailable);
    const run = await runSmoke([
      '--url',
      real.httpUrl,
      '--grpc-port',
      new URL(real.grpcUrl).port,
      '--events',
      real.eventLog,
    ]);
    const lines = run.stdout.split('\n');
    // The failing checks by name, with their messages, rather than only a non-zero exit code.
    expect(
      lines.filter((l) => l.startsWith('FAIL')),
      run.stderr,
    ).toEqual([]);
    // Every check declared in the script ran (none lost to a crash or an import error).
    const declared = readFileSync(SMOKE, 'utf8').match(/^@check$/gm)?.length ?? 0;
    expect(declared).toBeGreaterThan(0);
    expect(lines.filter((l) => l.startsWith('ok ')).length).toBe(declared);
    expect(run.stdout).toContain(`${declared} passed, 0 failed`);
    expect(run.code).toBe(0);
  });
});
