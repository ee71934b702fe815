import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { pidFileRuns, readPid, tritonFiles } from './triton-process.js';

/**
 * The real Triton the global setup started and the whole conformance run shares, stopped and
 * started by the same scripts (scripts/triton-up.sh, triton-down.sh) on the same ports and event
 * log, for the files that kill it on purpose (reliability.test.ts) or restart it after a stub
 * crash (stub-crash.ts). Undefined when the run has no real server.
 */
export interface SharedTriton {
  /** Where scripts/triton-up.sh keeps its log. */
  readonly logFile: string;
  /** The server's pid as its pid file says; undefined before the first start or after a stop. */
  pid(): number | undefined;
  /** Whether the server (its pid file's process) runs now. */
  running(): boolean;
  /** SIGKILL, as a crash would, then the shared memory it leaves cleaned up. */
  kill(): Promise<void>;
  killNow(): void;
  /** Starts it again and waits until it is ready. */
  start(): void;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const execFileAsync = promisify(execFile);

export function sharedTriton(): SharedTriton | undefined {
  const real = inject('realTriton');
  if ('unavailable' in real) return undefined;
  const port = new URL(real.httpUrl).port;
  const env = {
    ...process.env,
    TRITON_HTTP_PORT: port,
    TRITON_GRPC_PORT: new URL(real.grpcUrl).port,
    TRTLLM_FAKE_EVENT_LOG: real.eventLog,
  };
  const down = { cwd: ROOT, env: { ...env, TRITON_DOWN_SIGNAL: 'KILL' } };
  const { pidFile, logFile } = tritonFiles(port);
  const pid = (): number | undefined => readPid(pidFile);
  return {
    logFile,
    pid,
    running: () => pidFileRuns(pidFile),
    kill: async () => {
      await execFileAsync('bash', ['scripts/triton-down.sh'], down);
    },
    killNow: () => {
      execFileSync('bash', ['scripts/triton-down.sh'], down);
    },
    start: () => {
      execFileSync('bash', ['scripts/triton-up.sh'], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    },
  };
}
