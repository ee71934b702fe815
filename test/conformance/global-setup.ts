import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { inCi } from './ci.js';

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
    execFileSync('bash', ['scripts/triton-down.sh'], { cwd: root, env, stdio: 'inherit' });
  };
}
