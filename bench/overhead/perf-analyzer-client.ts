/**
 * Child process of the overhead benchmark for the native-client peer: perf_analyzer (C++), driven
 * the way genai-perf drives it (`--async --streaming`, the same three ensemble inputs, closed loop at
 * the concurrency, warm-up requests first). Prints one JSON result line like client.ts does.
 *
 * Its CPU is read from /proc/<pid>/stat (user + system, all its threads) every 20 ms while it runs;
 * the measured window is taken from its own profile export (first measured request sent to last
 * response), and the CPU over that window is interpolated between the samples around it, so start-up
 * and warm-up are left out as they are for the other variants.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readProfileExport } from '../validate/profile-export.js';
import { perfAnalyzerArgs } from '../validate/tools/perf-analyzer.js';
import type { ThroughputJob, ThroughputResult } from './client.js';
import { PROMPTS } from './config.js';

export interface PerfAnalyzerJob extends ThroughputJob {
  readonly perfAnalyzer: { readonly path: string; readonly ldLibraryPath: string };
}

// Kernel clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux).
const TICKS_PER_S = 100;

/** utime + stime of a process, in microseconds, or undefined once it is gone. */
function cpuUs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_S;
  } catch {
    return undefined;
  }
}

function interpolate(samples: readonly (readonly [number, number])[], atMs: number): number {
  let before = samples[0]!;
  for (const s of samples) {
    if (s[0] > atMs) {
      const span = s[0] - before[0];
      return span <= 0 ? s[1] : before[1] + ((s[1] - before[1]) * (atMs - before[0])) / span;
    }
    before = s;
  }
  return before[1];
}

// perf_analyzer 2.50 often exits with 0 having written only part of its profile export (cut at
// a multiple of 64 KiB; about one run in two at 64 streams with 2,000 requests, measured by hand:
// the thread that opened the file calls exit_group before the rest is written). A run whose export
// does not parse is made again, up to this many times in all.
const ATTEMPTS = 6;

async function run(job: PerfAnalyzerJob): Promise<ThroughputResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runOnce(job);
    } catch (err) {
      if (!(err instanceof SyntaxError) || attempt >= ATTEMPTS) throw err;
      process.stderr.write(
        `perf_analyzer left a cut-short profile export (${err.message}); running it again\n`,
      );
    }
  }
}

async function runOnce(job: PerfAnalyzerJob): Promise<ThroughputResult> {
  const dir = await mkdtemp(join(tmpdir(), 'overhead-pa-'));
  try {
    const inputData = join(dir, 'input.json');
    const exportFile = join(dir, 'export.json');
    const data = PROMPTS.map((p) => ({ text_input: [p], max_tokens: [job.maxTokens], stream: [true] }));
    await writeFile(inputData, JSON.stringify({ data }));
    const args = perfAnalyzerArgs({
      grpcAddress: job.grpcUrl.replace(/^[a-z]+:\/\//, ''),
      model: 'ensemble',
      inputData,
      concurrency: job.concurrency,
      requests: job.requests,
      warmup: job.warmup,
      exportFile,
    });
    const child = spawn(job.perfAnalyzer.path, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LD_LIBRARY_PATH: job.perfAnalyzer.ldLibraryPath },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error('perf_analyzer did not start');
    // [system-clock ms, CPU µs]: its export timestamps are on the system clock too.
    const samples: [number, number][] = [];
    const sample = () => {
      const cpu = cpuUs(pid);
      if (cpu !== undefined) samples.push([performance.timeOrigin + performance.now(), cpu]);
    };
    const poll = setInterval(sample, 20);
    sample();
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearInterval(poll);
    if (code !== 0) throw new Error(`perf_analyzer exited with ${code}: ${stderr.trim().slice(-1000)}`);
    const timings = await readProfileExport(exportFile);
    const tokens = timings.reduce((n, r) => n + r.tokenMs.length, 0);
    if (timings.length !== job.requests || tokens !== job.requests * job.maxTokens) {
      throw new Error(
        `perf_analyzer: ${timings.length} requests and ${tokens} tokens, expected ${job.requests} and ${job.requests * job.maxTokens}`,
      );
    }
    const startMs = Math.min(...timings.map((r) => r.sentMs));
    const endMs = Math.max(...timings.map((r) => r.lastResponseMs));
    if (samples.length < 2 || samples.at(-1)![0] < endMs) {
      throw new Error('perf_analyzer: too few CPU samples around the measured window');
    }
    return {
      tokens,
      requests: timings.length,
      wallMs: endMs - startMs,
      cpuUs: interpolate(samples, endMs) - interpolate(samples, startMs),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const job = JSON.parse(process.argv[2] ?? '{}') as PerfAnalyzerJob;
process.stdout.write(`${JSON.stringify(await run(job))}\n`);
