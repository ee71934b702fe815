import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

async function startCli(args: readonly string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = createInterface({ input: child.stdout });
  const [first] = (await once(lines, 'line')) as [string];
  return { child, first };
}

describe('trtllm-fake-triton', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`prints one ready line with both URLs, serves, and exits 0 on ${signal}`, async () => {
      const { child, first } = await startCli([
        '--grpc-port',
        '0',
        '--http-port',
        '0',
        '--itl-ms',
        '1',
        '--cors',
      ]);
      const match =
        /^fake Triton ready: grpc (http:\/\/127\.0\.0\.1:\d+) http (http:\/\/127\.0\.0\.1:\d+)$/.exec(first);
      expect(match).not.toBeNull();
      const ready = await fetch(`${match![2]}/v2/health/ready`);
      expect(ready.status).toBe(200);
      expect(ready.headers.get('access-control-allow-origin')).toBe('*');
      child.kill(signal);
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(0);
    });
  }

  it('refuses a bad option with exit code 2', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, '--grpc-port', 'abc'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(2);
    expect(stderr).toContain("--grpc-port must be a non-negative integer, got 'abc'");
  });
});
