/**
 * `pnpm bench:overhead`: what the SDK costs on top of bare gRPC clients, and against the official
 * Python tritonclient. One fake Triton (its own process) streams as fast as it can; each client
 * variant runs in a child process of its own at each concurrency level, so that the CPU time it
 * reports is the client's alone. Then client memory with many idle streams. Writes
 * bench/results/overhead.json and the results block of docs/PERFORMANCE.md. Never fails on numbers.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePeers } from '../validate/peers.js';
import type { MemoryJob, MemoryResult, SlicesJob, ThroughputJob, ThroughputResult } from './client.js';
import { type ColdStartResults, coldVariants, readColdStartConfig, runColdStart } from './cold-start.js';
import {
  type OverheadConfig,
  PROMPTS,
  readConfig,
  requestsFor,
  VARIANT_LABELS,
  type VariantName,
  warmupFor,
} from './config.js';
import {
  INTERLEAVED_TOKENS_PER_TURN,
  type InterleavedResults,
  interleavedVariants,
  interleavedWindow,
  readInterleavedLevels,
} from './interleaved.js';
import { BENCH_NODE, describeMachine, supportedNode, withinEngines } from './machine.js';
import { writeResultsMarkdown, writeSummaryMarkdown } from './markdown.js';
import type { PerfAnalyzerJob } from './perf-analyzer-client.js';
import {
  baselineEnv,
  distEnv,
  hasTaskset,
  type LineChild,
  runJsonChild,
  type ServerProcess,
  startLineChild,
  startServerProcess,
} from './processes.js';
import { ensurePythonEnv } from './python-env.js';
import {
  type MemoryRow,
  type MemoryRun,
  memoryRow,
  type OverheadResults,
  type RunFailure,
  type ThroughputRow,
  throughputRow,
  withRatios,
} from './results.js';
import {
  alternate,
  type Generation,
  readSideBySideConfig,
  roundsPerGeneration,
  type SideBySideResults,
  type SideBySideRow,
  sideBySidePlan,
  sideBySideRows,
  TurnFailure,
} from './side-by-side.js';
import {
  readStreamLimitConfig,
  type StreamLimitResults,
  semiSpaceFlag,
  streamLimitVariants,
} from './stream-limit.js';
import { checkTargets } from './targets.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HERE = join(ROOT, 'bench', 'overhead');
const SERVER_SCRIPT = join(HERE, 'fake-server.ts');
const CLIENT_SCRIPT = join(HERE, 'client.ts');
const PYTHON_SCRIPT = join(HERE, 'tritonclient_bench.py');
const PERF_ANALYZER_SCRIPT = join(HERE, 'perf-analyzer-client.ts');
// Memory runs of the Node clients start with V8's young generation at the size a busy process
// grows it to (16 MB per semi-space, Node 20's default maximum on 64-bit machines; fixed, so that
// every Node version runs with the same young generation). Without this,
// opening the first thousand streams is what doubles it, and that one-time growth (about 17 MB,
// the same for every Node client, and holding no live object after a full GC) would be charged to
// those streams: 26 KB per stream for the bare node:http2 client instead of 12. See PERFORMANCE.md.
const STEADY_NURSERY = ['--min-semi-space-size=16', '--max-semi-space-size=16'];
// One token, then silence for ten minutes: streams stay open and idle while memory is read.
const SLOW = { ttftMs: 0, itlMs: 600_000 };

const config = readConfig(hasTaskset());
const coldConfig = readColdStartConfig();
const limitConfig = readStreamLimitConfig();
const serverCpu = config.pin ? 0 : undefined;
const clientCpu = config.pin ? 1 : undefined;
const failures: RunFailure[] = [];
const variants = [...config.variants] as VariantName[];

// Figures from a Node the packages do not support describe no runtime a user has (Node 20's V8,
// for one, gives every object made by spreading a request a hidden class of its own).
const engines = supportedNode();
if (!withinEngines(process.version, engines)) {
  console.log(
    `warning: Node ${process.version} is outside the packages' engines (${engines}); for figures users ` +
      `can expect, run on a supported one: PATH="$(bash scripts/node-runtime.sh ${BENCH_NODE}):$PATH" pnpm bench:overhead`,
  );
}

let python: { python: string; pythonVersion: string; tritonclientVersion: string } | undefined;
if (variants.includes('python-tritonclient')) {
  const env = ensurePythonEnv(ROOT);
  if ('error' in env) {
    console.log(`python-tritonclient skipped: ${env.error}`);
    variants.splice(variants.indexOf('python-tritonclient'), 1);
    failures.push({ variant: 'python-tritonclient', mode: 'throughput', level: 0, error: env.error });
  } else {
    python = env;
  }
}

// The native-client peer: perf_analyzer from build/venv-peers (made by bench/validate/peers.ts).
let perfAnalyzer: PerfAnalyzerJob['perfAnalyzer'] | undefined;
if (variants.includes('perf-analyzer') && !coldConfig.only) {
  const peers = ensurePeers(ROOT);
  if ('skipped' in peers.perfAnalyzer) {
    console.log(`perf-analyzer skipped: ${peers.perfAnalyzer.skipped}`);
    variants.splice(variants.indexOf('perf-analyzer'), 1);
    failures.push({
      variant: 'perf-analyzer',
      mode: 'throughput',
      level: 0,
      error: peers.perfAnalyzer.skipped,
    });
  } else {
    perfAnalyzer = { path: peers.perfAnalyzer.path, ldLibraryPath: peers.env.LD_LIBRARY_PATH ?? '' };
  }
}

function childArgv(variant: VariantName, job: ThroughputJob | SlicesJob | MemoryJob): string[] {
  if (variant === 'perf-analyzer' && job.mode === 'throughput') {
    const paJob: PerfAnalyzerJob = { ...job, perfAnalyzer: perfAnalyzer! };
    return [process.execPath, '--import', 'tsx', PERF_ANALYZER_SCRIPT, JSON.stringify(paJob)];
  }
  if (variant === 'python-tritonclient') {
    return [python!.python, PYTHON_SCRIPT, JSON.stringify({ ...job, prompts: PROMPTS })];
  }
  return [
    process.execPath,
    ...(job.mode === 'memory' ? STEADY_NURSERY : []),
    ...(variant === 'sdk-grpc-young' ? [semiSpaceFlag(limitConfig)] : []),
    '--expose-gc',
    '--import',
    'tsx',
    CLIENT_SCRIPT,
    JSON.stringify(job),
  ];
}

/** Child processes' environment: the built packages, plus what a part of the run adds. */
type ChildEnv = NodeJS.ProcessEnv | undefined;

/** A child's environment option: a `-baseline` variant loads the baseline's builds (see baselineEnv). */
function envFor(variant: VariantName, env: ChildEnv): { env?: NodeJS.ProcessEnv } {
  const root = process.env.BENCH_BASELINE;
  if (variant.endsWith('-baseline') && root !== undefined) return { env: baselineEnv(root, env) };
  return env !== undefined ? { env } : {};
}

/**
 * Runs every variant `repeats` times, repeats outside and variants inside, so a burst of load from
 * elsewhere on the machine hits the variants alike. A run that failed returns undefined and is
 * left out; a variant with no run left has no entry.
 */
async function interleaved<R>(
  runVariants: readonly VariantName[],
  repeats: number,
  runOne: (variant: VariantName) => Promise<R | undefined>,
): Promise<Map<VariantName, R[]>> {
  const runs = new Map<VariantName, R[]>();
  for (let repeat = 0; repeat < repeats; repeat++) {
    for (const variant of runVariants) {
      const run = await runOne(variant);
      if (run !== undefined) runs.set(variant, [...(runs.get(variant) ?? []), run]);
    }
  }
  return runs;
}

/** Every variant at one level, `config.repeats` times, interleaved; failures are recorded, not thrown. */
async function throughputLevel(
  server: ServerProcess,
  runVariants: readonly VariantName[],
  concurrency: number,
  env?: ChildEnv,
  window: OverheadConfig = config,
): Promise<ThroughputRow[]> {
  const requests = requestsFor(window, concurrency);
  const runs = await interleaved(runVariants, config.repeats, async (variant) => {
    const job: ThroughputJob = {
      mode: 'throughput',
      variant,
      grpcUrl: server.grpcUrl,
      httpUrl: server.httpUrl,
      concurrency,
      requests,
      maxTokens: config.maxTokens,
      warmup: warmupFor(window, variant),
    };
    try {
      const r = await runJsonChild<ThroughputResult>(childArgv(variant, job), {
        ...(clientCpu !== undefined ? { cpu: clientCpu } : {}),
        ...envFor(variant, env),
        timeoutMs: 300_000,
      });
      console.log(
        `${String(concurrency).padStart(5)} streams  ${VARIANT_LABELS[variant].padEnd(36)} ` +
          `${Math.round(r.tokens / (r.wallMs / 1000))
            .toString()
            .padStart(8)} tokens/s  ${(r.cpuUs / r.tokens).toFixed(2).padStart(7)} µs CPU/token` +
          (r.warmup !== undefined && r.warmup.tokens > 0
            ? `  (warm-up: ${(r.warmup.cpuUs / r.warmup.tokens).toFixed(2)})`
            : ''),
      );
      return r;
    } catch (err) {
      failures.push({ variant, mode: 'throughput', level: concurrency, error: String(err) });
      console.log(`${concurrency} streams ${variant}: FAILED ${String(err).split('\n')[0]}`);
      return undefined;
    }
  });
  return [...runs].map(([variant, results]) => throughputRow(variant, concurrency, results));
}

/**
 * One run of a variant holding `streams` idle streams on a fresh fake (the streams of a run are
 * never ended, and an ensemble keeps generating), or undefined when the run failed (recorded).
 */
async function idleMemoryRun(
  variant: VariantName,
  streams: number,
  fakeEnv: NodeJS.ProcessEnv = {},
  env?: ChildEnv,
): Promise<MemoryRun | undefined> {
  const slow = await startServerProcess(SERVER_SCRIPT, { cpu: serverCpu, ...SLOW, env: fakeEnv });
  try {
    const job: MemoryJob = { mode: 'memory', variant, grpcUrl: slow.grpcUrl, httpUrl: slow.httpUrl, streams };
    const r = await runJsonChild<MemoryResult>(childArgv(variant, job), {
      ...(clientCpu !== undefined ? { cpu: clientCpu } : {}),
      ...envFor(variant, env),
      timeoutMs: 300_000,
    });
    console.log(
      `${String(streams).padStart(6)} idle streams  ${VARIANT_LABELS[variant].padEnd(36)} ` +
        `${(r.rssBytes / streams / 1024).toFixed(1).padStart(7)} KB RSS/stream` +
        // Only a Node client's footprint leaves V8's young generation out (client.ts).
        (variant === 'python-tritonclient' ? '' : ' (young generation left out)'),
    );
    return { rssBytes: r.rssBytes, heapBytes: r.heapBytes };
  } catch (err) {
    failures.push({ variant, mode: 'memory', level: streams, error: String(err) });
    console.log(`${streams} idle streams ${variant}: FAILED ${String(err).split('\n')[0]}`);
    return undefined;
  } finally {
    await slow.stop();
  }
}

/**
 * Every variant holding `streams` idle streams, `config.memoryRepeats` times, interleaved as the
 * throughput runs are: one row per variant with at least one run, its medians.
 */
async function memoryLevel(
  runVariants: readonly VariantName[],
  streams: number,
  fakeEnv?: NodeJS.ProcessEnv,
  env?: ChildEnv,
): Promise<MemoryRow[]> {
  const runs = await interleaved(runVariants, config.memoryRepeats, (variant) =>
    idleMemoryRun(variant, streams, fakeEnv, env),
  );
  return [...runs].map(([variant, list]) => memoryRow(variant, streams, list));
}

/**
 * Every variant of the side-by-side pairs at `concurrency`, in `sideConfig.processes` generations:
 * each starts a live process per variant, warms them up one after another, runs its share of the
 * rounds and ends them. A process that fails is recorded (with its variant) and ends the level:
 * the level then has no rows.
 */
async function sideBySideLevel(server: ServerProcess, concurrency: number): Promise<SideBySideRow[]> {
  const rounds = roundsPerGeneration(sideConfig);
  const generations: Generation[] = [];
  try {
    for (let g = 0; g < sideConfig.processes; g++)
      generations.push(await sideBySideGeneration(server, concurrency, rounds, g * rounds));
    const rows = sideBySideRows(concurrency, sidePlan.pairs, generations);
    for (const row of rows) {
      const [low, high] = row.interval;
      console.log(
        `${String(concurrency).padStart(5)} streams  side by side  ${row.label}: ${row.ratio.toFixed(3)}x ` +
          `CPU per token (95 %: ${low.toFixed(3)}-${high.toFixed(3)}; ${row.cpuUsPerToken.toFixed(2)} vs ` +
          `${row.referenceCpuUsPerToken.toFixed(2)} µs; ${row.processes} generations)`,
      );
    }
    return rows;
  } catch (err) {
    // A failure outside a turn (a bug of ours) is charged to the level's first client.
    const variant = err instanceof TurnFailure ? err.variant : sidePlan.variants[0]!;
    failures.push({ variant, mode: 'side-by-side', level: concurrency, error: String(err) });
    console.log(`${concurrency} streams side by side: FAILED ${String(err).split('\n')[0]}`);
    return [];
  }
}

/** One generation: fresh processes, warmed up, taking `rounds` turns numbered from `first`. */
async function sideBySideGeneration(
  server: ServerProcess,
  concurrency: number,
  rounds: number,
  first: number,
): Promise<Generation> {
  const children = new Map<VariantName, LineChild>();
  try {
    for (const variant of sidePlan.variants) {
      const job: SlicesJob = {
        mode: 'slices',
        variant,
        grpcUrl: server.grpcUrl,
        httpUrl: server.httpUrl,
        concurrency,
        requests: requestsFor({ ...config, tokens: sideConfig.sliceTokens }, concurrency),
        maxTokens: config.maxTokens,
        warmup: warmupFor(config, variant),
      };
      const child = startLineChild(childArgv(variant, job), {
        ...(clientCpu !== undefined ? { cpu: clientCpu } : {}),
        ...envFor(variant, undefined),
      });
      children.set(variant, child);
      try {
        await child.next();
      } catch (err) {
        throw new TurnFailure(variant, err);
      }
    }
    return await alternate(children, rounds, first);
  } finally {
    await Promise.all([...children.values()].map((c) => c.end()));
  }
}

const started = Date.now();

// Process start to first token (cold-start.ts), first, on a fake of its own.
let coldStart: ColdStartResults | undefined;
const coldRunVariants = coldVariants(variants);
if (coldConfig.runs > 0 && coldRunVariants.length > 0) {
  const coldServer = await startServerProcess(SERVER_SCRIPT, { cpu: serverCpu, ttftMs: 0, itlMs: 0 });
  try {
    const setup = {
      grpcUrl: coldServer.grpcUrl,
      httpUrl: coldServer.httpUrl,
      ...(python !== undefined ? { python: python.python } : {}),
      ...(process.env.BENCH_BASELINE !== undefined ? { baseline: process.env.BENCH_BASELINE } : {}),
      ...(clientCpu !== undefined ? { cpu: clientCpu } : {}),
    };
    // One round unmeasured: the fake's first calls of each kind (its own JIT) weigh on no variant.
    await runColdStart(coldRunVariants, { ...coldConfig, runs: 1 }, setup);
    coldStart = await runColdStart(coldRunVariants, coldConfig, setup, (variant, error) => {
      failures.push({ variant, mode: 'cold-start', level: 1, error });
      console.log(`cold start ${variant}: FAILED ${error.split('\n')[0]}`);
    });
  } finally {
    await coldServer.stop();
  }
  for (const row of coldStart.rows) {
    console.log(
      `cold start  ${row.label.padEnd(52)} ${row.firstTokenMs.toFixed(0).padStart(5)} ms to first token ` +
        `(median of ${row.runs})  ${row.cpuMs.toFixed(0).padStart(4)} ms CPU` +
        (row.ratioToPython !== undefined ? `  ${row.ratioToPython.toFixed(2)}x Python's` : ''),
    );
  }
}
if (coldConfig.only) {
  // Only this part ran: the published results (throughput, memory) stay as they are.
  const trial = process.env.BENCH_RESULTS;
  if (trial !== undefined && trial !== '') {
    await writeFile(trial, `${JSON.stringify({ coldStart, failures }, null, 2)}\n`);
  }
  console.log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s${trial ? `; ${trial}` : ''}`);
  process.exit(0);
}

// The twin is the side by side's control: the same client as sdk-grpc, which a run of its own only repeats.
const measuredVariants = variants.filter((v) => v !== 'sdk-grpc-twin');
const throughput: ThroughputRow[] = [];
const server = await startServerProcess(SERVER_SCRIPT, { cpu: serverCpu, ttftMs: 0, itlMs: 0 });
try {
  for (const concurrency of config.levels)
    throughput.push(...(await throughputLevel(server, measuredVariants, concurrency)));
} finally {
  await server.stop();
}
console.log(`throughput runs done after ${((Date.now() - started) / 1000).toFixed(0)} s`);
// Pairs measured in alternation (side-by-side.ts): balanced streams against one endpoint's, and
// this build against the baseline's.
let sideBySide: SideBySideResults | undefined;
const sideConfig = readSideBySideConfig();
const sidePlan = sideBySidePlan(variants);
if (sideConfig.levels.length > 0 && sidePlan.pairs.length > 0) {
  const sideServer = await startServerProcess(SERVER_SCRIPT, { cpu: serverCpu, ttftMs: 0, itlMs: 0 });
  const rows: SideBySideRow[] = [];
  try {
    for (const concurrency of sideConfig.levels)
      rows.push(...(await sideBySideLevel(sideServer, concurrency)));
  } finally {
    await sideServer.stop();
  }
  sideBySide = { ...sideConfig, rounds: roundsPerGeneration(sideConfig) * sideConfig.processes, rows };
}

// The two gRPC paths again, on a fake that sends one token of each generation in turn, as a GPU's
// in-flight batching does (see interleaved.ts).
let inTurn: InterleavedResults | undefined;
const interleavedLevels = readInterleavedLevels();
const turnVariants = interleavedVariants(variants);
if (
  interleavedLevels.length > 0 &&
  turnVariants.includes('sdk-grpc') &&
  turnVariants.includes('sdk-grpc-mux')
) {
  const turnServer = await startServerProcess(SERVER_SCRIPT, {
    cpu: serverCpu,
    ttftMs: 0,
    itlMs: 0,
    env: { FAKE_TOKENS_PER_TURN: String(INTERLEAVED_TOKENS_PER_TURN) },
  });
  const turnRows: ThroughputRow[] = [];
  const window = interleavedWindow(config);
  try {
    for (const concurrency of interleavedLevels)
      turnRows.push(...(await throughputLevel(turnServer, turnVariants, concurrency, undefined, window)));
  } finally {
    await turnServer.stop();
  }
  inTurn = {
    levels: interleavedLevels,
    tokensPerTurn: INTERLEAVED_TOKENS_PER_TURN,
    tokens: window.tokens,
    nodeWarmup: window.nodeWarmup,
    throughput: turnRows,
  };
}

const memory: MemoryRow[] = [];
// perf_analyzer cannot hold streams open idle: it has no memory run.
const memoryVariants = measuredVariants.filter((v) => v !== 'perf-analyzer');
for (const streams of config.memoryLevels) memory.push(...(await memoryLevel(memoryVariants, streams)));

// Past a server's stream limit: the default gRPC path and the socket probe (and the default path
// with a larger young generation), on a fake that allows `maxStreams` per connection, the
// transport allowed `maxConnections`.
let streamLimit: StreamLimitResults | undefined;
if (variants.includes('sdk-grpc') && (limitConfig.levels.length > 0 || limitConfig.memoryStreams > 0)) {
  const fakeEnv = { FAKE_MAX_STREAMS: String(limitConfig.maxStreams) };
  const clientEnv = distEnv({
    BENCH_GRPC_MAX_CONNECTIONS: String(limitConfig.maxConnections),
    // The probe knows no SETTINGS: it is told the limit (see variants/socket-probe.ts).
    BENCH_PROBE_STREAMS: String(limitConfig.maxStreams),
  });
  // The probes run past the limit when they run at the main levels (BENCH_VARIANTS).
  const limitVariants = streamLimitVariants(limitConfig).filter(
    (v) => !v.startsWith('socket-probe') || variants.includes(v),
  );
  const limitedThroughput: ThroughputRow[] = [];
  if (limitConfig.levels.length > 0) {
    const limited = await startServerProcess(SERVER_SCRIPT, {
      cpu: serverCpu,
      ttftMs: 0,
      itlMs: 0,
      env: fakeEnv,
    });
    try {
      for (const concurrency of limitConfig.levels) {
        limitedThroughput.push(...(await throughputLevel(limited, limitVariants, concurrency, clientEnv)));
      }
    } finally {
      await limited.stop();
    }
  }
  const limitedMemory =
    limitConfig.memoryStreams > 0
      ? await memoryLevel(['sdk-grpc'], limitConfig.memoryStreams, fakeEnv, clientEnv)
      : [];
  streamLimit = { ...limitConfig, throughput: limitedThroughput, memory: limitedMemory };
}

const rows = withRatios(throughput);
const results: OverheadResults = {
  machine: describeMachine({
    ...(python !== undefined
      ? { python: python.pythonVersion, tritonclient: python.tritonclientVersion }
      : {}),
    pinned: config.pin,
  }),
  config: {
    ...config,
    fakeServer: '@trtllm/testing startFakeTriton, model ensemble (one token per response), ttftMs 0, itlMs 0',
  },
  throughput: rows,
  memory,
  ...(streamLimit !== undefined ? { streamLimit } : {}),
  ...(inTurn !== undefined ? { interleaved: inTurn } : {}),
  ...(coldStart !== undefined ? { coldStart } : {}),
  ...(sideBySide !== undefined ? { sideBySide } : {}),
  targets: checkTargets(rows, memory, streamLimit, inTurn, sideBySide),
  failures,
};
// BENCH_RESULTS=<file>: a trial run writes its JSON there and leaves the published results and docs alone.
const trialResults = process.env.BENCH_RESULTS;
if (trialResults !== undefined && trialResults !== '') {
  await writeFile(trialResults, `${JSON.stringify(results, null, 2)}\n`);
} else {
  await mkdir(join(ROOT, 'bench', 'results'), { recursive: true });
  await writeFile(join(ROOT, 'bench', 'results', 'overhead.json'), `${JSON.stringify(results, null, 2)}\n`);
  await writeResultsMarkdown(join(ROOT, 'docs', 'PERFORMANCE.md'), results);
  await writeSummaryMarkdown(join(ROOT, 'README.md'), results);
}
for (const t of results.targets) {
  console.log(
    `${t.met ? 'met   ' : 'MISSED'} ${t.target} at ${t.level}: ${t.value.toFixed(3)} (threshold ${t.threshold})`,
  );
}
console.log(
  `done in ${((Date.now() - started) / 1000).toFixed(0)} s; ${trialResults || 'bench/results/overhead.json, docs/PERFORMANCE.md, README.md'}`,
);
