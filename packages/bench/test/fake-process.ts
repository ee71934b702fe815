import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../testing/src/cli.ts', import.meta.url));

/** A fake Triton running in a process of its own. */
export interface FakeProcess {
  readonly grpcUrl: string;
  readonly httpUrl: string;
  stop(): Promise<void>;
}

/**
 * Starts the fake Triton's CLI in a child process, as a real server runs apart from its clients:
 * a timing test must not share one event loop between the server's pacing and the client's clock.
 */
export function startFakeProcess(options: { ttftMs: number; itlMs: number }): Promise<FakeProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', CLI, '--grpc-port', '0', '--http-port', '0'].concat([
      '--ttft-ms',
      String(options.ttftMs),
      '--itl-ms',
      String(options.itlMs),
    ]),
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`the fake Triton exited with ${code} before it was ready`)),
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const ready = /grpc (\S+) http (\S+)/.exec(line);
      if (ready === null) return;
      child.removeAllListeners('exit');
      resolve({
        grpcUrl: ready[1]!,
        httpUrl: ready[2]!,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
