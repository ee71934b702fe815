import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { inCi } from './ci.js';
import { pidFileRuns, tritonFiles } from './triton-process.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const HTTP_PORT = process.env.TRITON_HTTP_PORT ?? '18000';
const GRPC_PORT = process.env.TRITON_GRPC_PORT ?? '18001';
// One event log per server, so suites on other ports (TRITON_*_PORT) can run side by side.
const EVENT_LOG = `${root}/build/triton-events-${HTTP_PORT}.jsonl`;

declare module 'vitest' {
  export interface ProvidedContext {
    realTriton: { grpcUrl: string; httpUrl: string; eventLog: string } | { unavailable: string };
  }
}

/**
 * Starts the real Triton (CPU, from the nvidia-pytriton wheel) on loopback for the conformance
 * suite. Under CI a server that fails to start fails the run; on a developer machine without
 * Python the real-server half is skipped with a loud message.
 */
export async function setup(project: TestProject): Promise<() => void> {
  const env = {
    ...process.env,
    TRITON_HTTP_PORT: HTTP_PORT,
    TRITON_GRPC_PORT: GRPC_PORT,
    TRTLLM_FAKE_EVENT_LOG: EVENT_LOG,
  };
  try {
    execFileSync('bash', ['scripts/triton-up.sh'], {
      cwd: root,
      env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  } catch (err) {
    const reason = `the real Triton server did not start: ${(err as Error).message}`;
    if (inCi()) throw new Error(reason);
    console.warn(
      `\n!!! ${reason}\n!!! The conformance suite runs against the fake only. Run \`pnpm triton:up\` to see why.\n`,
    );
    project.provide('realTriton', { unavailable: reason });
    return () => undefined;
  }
  project.provide('realTriton', {
    grpcUrl: `http://127.0.0.1:${GRPC_PORT}`,
    httpUrl: `http://127.0.0.1:${HTTP_PORT}`,
    eventLog: EVENT_LOG,
  });
  return () => {
    reportDeadServer();
    execFileSync('bash', ['scripts/triton-down.sh'], { cwd: root, env, stdio: 'inherit' });
  };
}

/**
 * A shared server that is gone at the end of the run died under some test (every test that stops it
 * starts it again): say so with the end of its log, since the tests after it only saw a refused
 * connection.
 */
function reportDeadServer(): void {
  const { pidFile, logFile: log } = tritonFiles(HTTP_PORT);
  // A zombie counts as gone (`alive`), where `process.kill(pid, 0)` would find it.
  if (pidFileRuns(pidFile)) return;
  const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-30).join('\n') : '(no log)';
  console.error(`\n!!! The shared real Triton exited during the run. The end of ${log}:\n${tail}\n`);
}
