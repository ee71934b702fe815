import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Whether `taskset` is on PATH (util-linux), to pin server and client to different cores. */
export function hasTaskset(): boolean {
  return spawnSync('taskset', ['-c', '0', 'true']).status === 0;
}

/** The command line for `argv`, pinned to `cpu` when asked. */
/**
 * The environment of the benchmark's Node processes: tsx resolves `@trtllm/*` to the built dist/
 * (see tsconfig.dist.json), so the SDK is measured as users install it, without tsx's transform of
 * the sources on its hot path. `pnpm build` must have run.
 */
export function distEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const missing = DIST_ENTRIES.filter((f) => !existsSync(f));
  if (missing.length > 0) throw new Error(`run pnpm build first: ${missing.join(', ')} missing`);
  return { ...process.env, TSX_TSCONFIG_PATH: DIST_TSCONFIG, ...extra };
}

const DIST_TSCONFIG = fileURLToPath(new URL('./tsconfig.dist.json', import.meta.url));

/**
 * A `-baseline` variant's environment: the baseline checkout's builds (`root`) answer
 * `@trtllm/sdk`, `@trtllm/grpc` and `@trtllm/http`, for the benchmark's code and for the
 * baseline's own packages alike. With this checkout's paths, the baseline's transports would
 * import this checkout's core, which need not export what an older build imports (the transport
 * kit left the main entry in issue 54). `BENCH_BASELINE_PART=transport` keeps this checkout's core,
 * as that mix asks.
 */
export function baselineEnv(root: string, env: NodeJS.ProcessEnv = distEnv()): NodeJS.ProcessEnv {
  return { ...env, TSX_TSCONFIG_PATH: baselineTsconfig(root) };
}

const baselineTsconfigs = new Map<string, string>();

function baselineTsconfig(root: string): string {
  const known = baselineTsconfigs.get(root);
  if (known !== undefined) return known;
  const dist = JSON.parse(readFileSync(DIST_TSCONFIG, 'utf8')) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  const theirs =
    process.env.BENCH_BASELINE_PART === 'transport' ? ['@trtllm/grpc', '@trtllm/http'] : BASELINE_OWNS;
  const paths = Object.fromEntries(
    Object.entries(dist.compilerOptions.paths).map(([name, [target]]) => [
      name,
      [theirs.includes(name) ? relative(CHECKOUT, join(root, target!)) : target!],
    ]),
  );
  const file = join(mkdtempSync(join(tmpdir(), 'bench-baseline-')), 'tsconfig.json');
  writeFileSync(
    file,
    JSON.stringify({ extends: DIST_TSCONFIG, compilerOptions: { baseUrl: CHECKOUT, paths } }),
  );
  baselineTsconfigs.set(root, file);
  return file;
}

const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url));
const BASELINE_OWNS = ['@trtllm/sdk', '@trtllm/grpc', '@trtllm/http'];
const DIST_ENTRIES = ['core', 'grpc', 'http', 'testing', 'bench'].map((p) =>
  fileURLToPath(new URL(`../../packages/${p}/dist/index.js`, import.meta.url)),
);

function pinned(argv: readonly string[], cpu: number | undefined): [string, string[]] {
  return cpu === undefined ? [argv[0]!, argv.slice(1)] : ['taskset', ['-c', String(cpu), ...argv]];
}

/** Runs a child to its end and resolves to the JSON object it printed as its last stdout line. */
export function runJsonChild<T>(
  argv: readonly string[],
  options: { cpu?: number | undefined; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<T> {
  const [cmd, args] = pinned(argv, options.cpu);
  return new Promise<T>((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? distEnv() });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${argv.join(' ')}: no result after ${options.timeoutMs} ms\n${err}`));
    }, options.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || last === '') {
        reject(new Error(`${argv.slice(0, 4).join(' ')} exited with ${code}:\n${excerpt(err.trim())}`));
        return;
      }
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`${argv.slice(0, 4).join(' ')} printed no JSON result: ${last.slice(0, 200)}`));
      }
    });
  });
}

/** A child that answers each line sent to it with one JSON line (see client.ts `slices`). */
export interface LineChild {
  /** Sends `line` and resolves to the JSON object of the child's next stdout line. */
  ask<T>(line: string): Promise<T>;
  /** The JSON object of the child's next stdout line, without sending anything (its greeting). */
  next<T>(): Promise<T>;
  /** Ends its stdin and waits for it to exit; kills it after `timeoutMs`. */
  end(timeoutMs?: number): Promise<void>;
}

/**
 * Starts a child that stays alive between requests, pinned to `cpu` when asked. A child that exits
 * early fails every pending and later `next()` with its stderr.
 */
export function startLineChild(
  argv: readonly string[],
  options: { cpu?: number | undefined; env?: NodeJS.ProcessEnv },
): LineChild {
  const [cmd, args] = pinned(argv, options.cpu);
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? distEnv() });
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  // Writing to a child that died fails with EPIPE on its stdin; unheard, that error would end this
  // process. The death itself reaches the caller through `next()`, with the child's stderr.
  child.stdin.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async <T>(): Promise<T> => {
    const got = await lines.next();
    if (got.done === true) {
      const code = await exited;
      throw new Error(`${argv.slice(0, 4).join(' ')} exited with ${code}:\n${excerpt(err.trim())}`);
    }
    return JSON.parse(got.value) as T;
  };
  return {
    next,
    ask(line) {
      child.stdin.write(`${line}\n`);
      return next();
    },
    async end(timeoutMs = 10_000) {
      child.stdin.end();
      const kill = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(kill);
    },
  };
}

/** A fake Triton in its own process. */
export interface ServerProcess {
  readonly grpcUrl: string;
  readonly httpUrl: string;
  stop(): Promise<void>;
}

export function startServerProcess(
  script: string,
  options: { cpu?: number | undefined; ttftMs: number; itlMs: number; env?: NodeJS.ProcessEnv },
): Promise<ServerProcess> {
  // The fake warns about listener counts with thousands of streams; its owners know (see docs/PERFORMANCE.md).
  const node = [process.execPath, '--disable-warning=MaxListenersExceededWarning', '--import', 'tsx', script];
  const [cmd, args] = pinned(node, options.cpu);
  const child: ChildProcess = spawn(cmd, args, {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: distEnv({
      ...options.env,
      FAKE_TTFT_MS: String(options.ttftMs),
      FAKE_ITL_MS: String(options.itlMs),
    }),
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the fake server did not start within 60 s'));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the fake server exited with ${code} before listening`));
    });
    lines.once('line', (line) => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      const urls = JSON.parse(line) as { grpcUrl: string; httpUrl: string };
      resolve({
        ...urls,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
            child.once('exit', () => {
              clearTimeout(kill);
              done();
            });
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/** A long stderr cut to its start (where the error usually says what failed) and its end. */
function excerpt(text: string): string {
  return text.length <= 2000 ? text : `${text.slice(0, 600)}\n[…]\n${text.slice(-1400)}`;
}
