/**
 * The cold-start part of `pnpm bench:overhead` (issue #53 point 10): how long a user's first script
 * takes from process start to its first token. Each run is a fresh process of a small script a user
 * would write (cold/*.mjs, or tritonclient_bench.py in its "cold" mode), run by plain `node` (no
 * tsx) from a scratch project whose node_modules links the built packages, as an install would.
 * The time is taken by this process, from before the spawn to the child's line at its first token;
 * the child reports its own CPU time up to then.
 */
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VARIANT_LABELS, type VariantName, whole } from './config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const COLD_DIR = fileURLToPath(new URL('./cold', import.meta.url));
const PYTHON_SCRIPT = fileURLToPath(new URL('./tritonclient_bench.py', import.meta.url));

/** The variants with a cold-start script, in the order of the table. */
export const COLD_VARIANTS = [
  'sdk-grpc',
  'sdk-grpc-baseline',
  'sdk-http',
  'grpc-js-bare',
  'python-tritonclient',
] as const satisfies readonly VariantName[];

export type ColdVariant = (typeof COLD_VARIANTS)[number];

const SCRIPTS: Readonly<Record<Exclude<ColdVariant, 'python-tritonclient'>, string>> = {
  'sdk-grpc': 'sdk-grpc.mjs',
  'sdk-grpc-baseline': 'sdk-grpc.mjs',
  'sdk-http': 'sdk-http.mjs',
  'grpc-js-bare': 'grpc-js.mjs',
};

export interface ColdStartConfig {
  /** Fresh processes per variant, interleaved; the table shows medians. `BENCH_COLD_RUNS`, default 10; 0 skips the part. */
  readonly runs: number;
  /** Only this part runs (`BENCH_COLD_ONLY=1`): no throughput or memory runs, no published results written. */
  readonly only: boolean;
  /** `max_tokens` of the one request. */
  readonly maxTokens: number;
}

export function readColdStartConfig(): ColdStartConfig {
  const only = process.env.BENCH_COLD_ONLY === '1';
  const runs = whole('BENCH_COLD_RUNS', 10, 0);
  if (only && runs === 0)
    throw new Error('BENCH_COLD_ONLY=1 runs the cold-start part, which BENCH_COLD_RUNS=0 skips');
  return { runs, only, maxTokens: 8 };
}

/** The cold-start variants among the run's variants, in table order. */
export function coldVariants(variants: readonly string[]): ColdVariant[] {
  return COLD_VARIANTS.filter((v) => variants.includes(v));
}

/** One variant's fresh processes: medians, and every run's time to first token. */
export interface ColdStartRow {
  readonly variant: ColdVariant;
  readonly label: string;
  readonly runs: number;
  /** Process start (the spawn) to the first token, median, in ms. */
  readonly firstTokenMs: number;
  readonly firstTokenMsRuns: readonly number[];
  /** The child's CPU time (user + system, every thread) up to its first token, median, in ms. */
  readonly cpuMs: number;
  /** `firstTokenMs` over Python tritonclient's, when it ran (below 1: sooner). */
  readonly ratioToPython?: number;
}

export interface ColdStartResults {
  readonly runs: number;
  readonly maxTokens: number;
  readonly rows: readonly ColdStartRow[];
}

/** One fresh process's figures. */
export interface ColdRun {
  readonly firstTokenMs: number;
  readonly cpuMs: number;
}

/** Where each variant runs from, and how to start it. */
export interface ColdStartSetup {
  readonly grpcUrl: string;
  readonly httpUrl: string;
  /** The Python with tritonclient (python-env.ts), for that variant. */
  readonly python?: string;
  /** Root of another built checkout (`BENCH_BASELINE`), for sdk-grpc-baseline. */
  readonly baseline?: string;
  /** Pin each child to this CPU with taskset. */
  readonly cpu?: number;
}

/**
 * Runs every variant `runs` times, runs outside and variants inside (as the throughput runs are),
 * and returns one row per variant with a run left. A failed run is passed to `onFailure` and left
 * out.
 */
export async function runColdStart(
  variants: readonly ColdVariant[],
  config: Pick<ColdStartConfig, 'runs' | 'maxTokens'>,
  setup: ColdStartSetup,
  onFailure: (variant: ColdVariant, error: string) => void = () => {},
): Promise<ColdStartResults> {
  const projects = new Map<string, string>();
  const projectFor = (variant: ColdVariant) => {
    const packages = variant === 'sdk-grpc-baseline' ? setup.baseline : ROOT;
    if (packages === undefined) throw new Error('sdk-grpc-baseline needs BENCH_BASELINE');
    let dir = projects.get(packages);
    if (dir === undefined) {
      dir = scratchProject(packages);
      projects.set(packages, dir);
    }
    return dir;
  };
  const job = {
    mode: 'cold',
    grpcUrl: setup.grpcUrl,
    httpUrl: setup.httpUrl,
    protoDir: join(ROOT, 'proto'),
    prompt: 'What is ML?',
    prompts: ['What is ML?'],
    maxTokens: config.maxTokens,
  };
  const runs = new Map<ColdVariant, ColdRun[]>();
  try {
    for (let i = 0; i < config.runs; i++) {
      for (const variant of variants) {
        let argv: string[];
        if (variant === 'python-tritonclient') {
          if (setup.python === undefined)
            throw new Error('python-tritonclient needs the Python of python-env.ts');
          argv = [setup.python, PYTHON_SCRIPT, JSON.stringify(job)];
        } else {
          argv = [process.execPath, join(projectFor(variant), SCRIPTS[variant]), JSON.stringify(job)];
        }
        try {
          const run = await coldRun(argv, setup.cpu);
          runs.set(variant, [...(runs.get(variant) ?? []), run]);
        } catch (err) {
          onFailure(variant, String(err));
        }
      }
    }
  } finally {
    for (const dir of projects.values()) rmSync(dir, { recursive: true, force: true });
  }
  return {
    runs: config.runs,
    maxTokens: config.maxTokens,
    rows: withPythonRatios([...runs].map(([variant, list]) => coldStartRow(variant, list))),
  };
}

/** Each row with its time to first token over Python tritonclient's, when Python has a row. */
export function withPythonRatios(rows: readonly ColdStartRow[]): ColdStartRow[] {
  const python = rows.find((r) => r.variant === 'python-tritonclient');
  return rows.map((r) =>
    python === undefined || r === python ? r : { ...r, ratioToPython: r.firstTokenMs / python.firstTokenMs },
  );
}

/** One row from a variant's runs: the medians. */
export function coldStartRow(variant: ColdVariant, runs: readonly ColdRun[]): ColdStartRow {
  const times = runs.map((r) => r.firstTokenMs);
  return {
    variant,
    label: VARIANT_LABELS[variant],
    runs: runs.length,
    firstTokenMs: median(times),
    firstTokenMsRuns: times,
    cpuMs: median(runs.map((r) => r.cpuMs)),
  };
}

/**
 * A project outside the workspace, as a user's: the cold-start scripts beside a node_modules that
 * links the built packages of `root` (and grpc-js, for its script), resolved as an install would.
 */
function scratchProject(root: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'trtllm-cold-'));
  const link = (name: string, target: string) => {
    const at = join(dir, 'node_modules', name);
    mkdirSync(dirname(at), { recursive: true });
    symlinkSync(target, at, 'dir');
  };
  link('@trtllm/sdk', join(root, 'packages', 'core'));
  link('@trtllm/grpc', join(root, 'packages', 'grpc'));
  link('@trtllm/http', join(root, 'packages', 'http'));
  for (const name of ['@grpc/grpc-js', '@grpc/proto-loader']) {
    link(name, realpathSync(join(ROOT, 'node_modules', name)));
  }
  for (const file of readdirSync(COLD_DIR)) copyFileSync(join(COLD_DIR, file), join(dir, file));
  return dir;
}

/** Spawns one child and times it from before the spawn to its first stdout line. */
function coldRun(argv: readonly string[], cpu: number | undefined): Promise<ColdRun> {
  const [cmd, args] =
    cpu === undefined ? [argv[0]!, argv.slice(1)] : ['taskset', ['-c', String(cpu), ...argv]];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // Without TSX_TSCONFIG_PATH and the like: the child is a plain script, as a user runs it.
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let firstTokenMs: number | undefined;
    child.stdout.on('data', (d: Buffer) => {
      if (firstTokenMs === undefined && d.includes(10)) firstTokenMs = performance.now() - started;
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = out.split('\n')[0] ?? '';
      if (code !== 0 || firstTokenMs === undefined) {
        reject(new Error(`${argv.slice(0, 2).join(' ')} exited with ${code}: ${err.trim().slice(-600)}`));
        return;
      }
      try {
        const { cpuMs } = JSON.parse(line) as { cpuMs: number };
        resolve({ firstTokenMs, cpuMs });
      } catch {
        reject(new Error(`${argv.slice(0, 2).join(' ')} printed no JSON line: ${line.slice(0, 200)}`));
      }
    });
  });
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
