import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
// With TRTLLM_GRPC_ENGINE set, @trtllm/grpc resolves to test/support/grpc-engine.ts, as in vitest.
const tsconfig = fileURLToPath(
  new URL(
    process.env.TRTLLM_GRPC_ENGINE === undefined ? './tsconfig.json' : './tsconfig.grpc-engine.json',
    import.meta.url,
  ),
);

// A script that is still alive this long after it started never ends by itself.
export const GIVE_UP_MS = 30_000;

/** How a script ran: its output, how it ended, and when (the test process's clock, as the script's). */
export interface ScriptRun {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number | null;
  /** Killed by us after GIVE_UP_MS: the process would not end by itself. */
  readonly killed: boolean;
  readonly exitedAt: number;
}

/**
 * Runs `test/lifetime/scripts/<name>.ts` as a user runs a script: its own Node process, the
 * TypeScript sources through tsx (with @trtllm/http's Node entry, the one a user on Node gets), the
 * fake's addresses in the environment. Resolves when the process exits, or is killed for not exiting.
 */
export function runScript(name: string, urls: { grpcUrl: string; httpUrl: string }): Promise<ScriptRun> {
  return runUntilExit(['--import', 'tsx', `test/lifetime/scripts/${name}.ts`], root, {
    TSX_TSCONFIG_PATH: tsconfig,
    TRITON_GRPC_URL: urls.grpcUrl,
    TRITON_HTTP_URL: urls.httpUrl,
  });
}

/**
 * Runs `node <args>` in `cwd` with `env` added to ours, and resolves when the process exits, or is
 * killed after GIVE_UP_MS for not exiting.
 */
export function runUntilExit(
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, GIVE_UP_MS);
    child.on('error', reject);
    // 'exit' is the moment the process ended; the output is complete only at 'close', after it.
    let exitedAt = 0;
    child.on('exit', () => {
      exitedAt = Date.now();
      clearTimeout(timer);
    });
    child.on('close', (code) => resolve({ stdout, stderr, code, killed, exitedAt }));
  });
}

/** The time a script printed with `lastCall()` (see scripts/child.ts). */
export function lastCallAt(run: ScriptRun): number {
  const match = /last call ended at (\d+)/.exec(run.stdout);
  if (match === null) {
    throw new Error(`the script never reached its last call:\n${run.stdout}\n${run.stderr}`);
  }
  return Number(match[1]);
}

/** Runs `task`s at most `n` at a time (children of tsx take a core each while they start). */
export function limit(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const queue: (() => void)[] = [];
  return async (task) => {
    if (running >= n) await new Promise<void>((go) => queue.push(go));
    running += 1;
    try {
      return await task();
    } finally {
      running -= 1;
      queue.shift()?.();
    }
  };
}
