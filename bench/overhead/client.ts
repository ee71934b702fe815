/**
 * Child process of the overhead benchmark: runs ONE client variant, so that its CPU time and
 * memory are its own. Reads a JSON job from argv[2], prints one JSON result line on stdout.
 *
 * - `throughput`: warm-up requests, then `requests` streams at `concurrency`, closed loop; reports
 *   tokens, wall time and this process's CPU time (process.cpuUsage: user + system, all threads)
 *   over the measured window only.
 * - `slices`: warm-up requests, then prints `{"ready":true}` and runs `requests` streams at
 *   `concurrency` each time a line comes on stdin, printing that slice's tokens and CPU time, until
 *   stdin ends (the side-by-side part of run.ts alternates several of these processes).
 * - `memory`: opens `streams` streams against a server that sends one token and then stays quiet,
 *   waits until every stream has its first token, and reports memory growth after a full GC.
 */
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { driveLoad } from '@trtllm/bench';
import { PROMPTS } from './config.js';
import type { RunResult } from './results.js';
import { connectBareVariant } from './variants/connect-bare.js';
import { grpcJsBareVariant } from './variants/grpc-js-bare.js';
import { httpProbeVariant } from './variants/http-probe.js';
import { http2BareVariant } from './variants/http2-bare.js';
import { loadBaseline, sdkBaselineVariant, sdkVariant, twoTransportsVariant } from './variants/sdk.js';
import { PROBE_SHARED_CALLS, socketProbeVariant } from './variants/socket-probe.js';
import { iteratedProbeVariant } from './variants/socket-probe-iter.js';
import type { Endpoints, Variant } from './variants/variant.js';

export interface ThroughputJob extends Endpoints {
  readonly mode: 'throughput';
  readonly variant: string;
  readonly concurrency: number;
  readonly requests: number;
  readonly maxTokens: number;
  readonly warmup: number;
}

/** A throughput job measured in slices on demand, the process kept between them. */
export interface SlicesJob extends Omit<ThroughputJob, 'mode'> {
  readonly mode: 'slices';
}

export interface MemoryJob extends Endpoints {
  readonly mode: 'memory';
  readonly variant: string;
  readonly streams: number;
}

/** What a throughput child prints: one run, as results.ts adds runs up into a row. */
export type ThroughputResult = RunResult;

export interface MemoryResult {
  readonly streams: number;
  /** Growth of the resident set size outside V8's young generation (see footprint), in bytes. */
  readonly rssBytes: number;
  /** Growth of V8 heap used + external + array buffers, in bytes. */
  readonly heapBytes: number;
}

function makeVariant(name: string, endpoints: Endpoints): Variant {
  switch (name) {
    case 'sdk-grpc':
    case 'sdk-grpc-young': // the same client; run.ts gives its process the V8 flag
    case 'sdk-grpc-twin': // the same client again, in the side by side's control pair
      return sdkVariant('grpc', endpoints);
    case 'sdk-grpc-baseline':
      return sdkBaselineVariant('grpc', endpoints);
    case 'sdk-http-baseline':
      return sdkBaselineVariant('http', endpoints);
    case 'sdk-grpc-mux':
      return sdkVariant('grpc', endpoints, { multiplex: true });
    case 'sdk-grpc-replicas':
      return sdkVariant('grpc', endpoints, { replicas: 2 });
    case 'sdk-grpc-replicas-baseline':
      return sdkBaselineVariant('grpc', endpoints, { replicas: 2 });
    case 'sdk-grpc-two-transports':
      return twoTransportsVariant(endpoints);
    case 'sdk-grpc-replica-one':
      return sdkVariant('grpc', endpoints, { replicas: 1 });
    case 'sdk-grpc-mux-baseline':
      return sdkBaselineVariant('grpc', endpoints, { multiplex: true });
    case 'sdk-http':
      return sdkVariant('http', endpoints);
    case 'connect-bare':
      return connectBareVariant(endpoints);
    case 'grpc-js-bare':
      return grpcJsBareVariant(endpoints);
    case 'socket-probe':
    case 'socket-probe-iter': {
      // BENCH_PROBE_STREAMS: the server's stream limit, past which the probe opens another connection.
      const limit = Number(process.env.BENCH_PROBE_STREAMS ?? '');
      const probe = socketProbeVariant(endpoints, limit > 0 ? { streamsPerConnection: limit } : {});
      return name === 'socket-probe' ? probe : iteratedProbeVariant(probe);
    }
    case 'socket-probe-mux':
      return socketProbeVariant(endpoints, { sharedCalls: PROBE_SHARED_CALLS });
    case 'http-probe':
      return httpProbeVariant(endpoints);
    case 'http2-bare':
      return http2BareVariant(endpoints);
    default:
      throw new Error(`unknown variant ${name}`);
  }
}

/** Tokens and CPU time (user + system, microseconds) of a batch of requests. */
interface Measured {
  readonly tokens: number;
  readonly cpuUs: number;
  readonly wallMs: number;
}

/** A variant's closed loop: `run(n)` sends n requests at the job's concurrency and measures them. */
function closedLoop(job: ThroughputJob | SlicesJob): {
  run(requests: number): Promise<Measured>;
  close(): Promise<void>;
} {
  const variant = makeVariant(job.variant, job);
  let id = 0;
  const one = async () => {
    const n = id++;
    const got = await variant.stream(PROMPTS[n % PROMPTS.length]!, job.maxTokens, n);
    if (got !== job.maxTokens) throw new Error(`request ${n}: ${got} tokens, expected ${job.maxTokens}`);
    return got;
  };
  return {
    async run(requests) {
      let tokens = 0;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await driveLoad({ concurrency: job.concurrency, requests }, async () => {
        // Not `tokens += await one()`: that reads `tokens` before the await and loses concurrent updates.
        const got = await one();
        tokens += got;
      });
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      return { tokens, cpuUs: cpu.user + cpu.system, wallMs };
    },
    close: () => variant.close(),
  };
}

async function throughput(job: ThroughputJob): Promise<ThroughputResult> {
  const loop = closedLoop(job);
  const warmup = await loop.run(job.warmup);
  const measured = await loop.run(job.requests);
  await loop.close();
  return {
    tokens: measured.tokens,
    requests: job.requests,
    wallMs: measured.wallMs,
    cpuUs: measured.cpuUs,
    warmup: { tokens: warmup.tokens, cpuUs: warmup.cpuUs },
  };
}

/** Runs a slice per line read from stdin; ends (closing its variant) when stdin does. */
async function slices(job: SlicesJob): Promise<void> {
  const loop = closedLoop(job);
  await loop.run(job.warmup);
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  for await (const _ of createInterface({ input: process.stdin })) {
    process.stdout.write(`${JSON.stringify(await loop.run(job.requests))}\n`);
  }
  await loop.close();
}

const MEMORY_BATCH = 1000;

function fullGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('the memory job needs node --expose-gc');
  gc();
  gc();
}

/**
 * RSS outside V8's young generation, and the heap. The young generation is reserved at a fixed
 * size (run.ts: STEADY_NURSERY), but its pages count in RSS only once written, and how much of it
 * the warm-up had written varied from run to run: one build measured 3.7 to 9.1 KB of RSS growth
 * per stream at 1,000 streams, the run at 9.1 with 2.9 MB more of the young generation resident
 * at the end than at the start. It holds nothing live after the full GC, and every process pays
 * it once, not per stream; left out, the same runs measured 3.9 to 5.9 KB.
 */
function footprint(): { rss: number; heap: number } {
  const m = process.memoryUsage();
  const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return { rss: m.rss - (young?.physical_space_size ?? 0), heap: m.heapUsed + m.external + m.arrayBuffers };
}

async function memory(job: MemoryJob): Promise<MemoryResult> {
  const variant = makeVariant(job.variant, job);
  // Load code, open the connection and read the schema first: one-time costs are not per stream.
  // max_tokens 1 ends at once even though the server waits minutes before a second token.
  for (let i = 0; i < 20; i++) await variant.stream(PROMPTS[i % PROMPTS.length]!, 1, i);
  await sleep(200);
  fullGc();
  const before = footprint();
  // Streams open in batches, each after the last one's first tokens: a client accumulates idle streams,
  // and opening thousands at once only measures how the server copes with a burst of connections.
  for (let opened = 0; opened < job.streams; ) {
    const batch = Math.min(MEMORY_BATCH, job.streams - opened);
    await Promise.all(
      Array.from(
        { length: batch },
        (_, i) =>
          new Promise<void>((established) => {
            const n = opened + i;
            variant.stream(PROMPTS[n % PROMPTS.length]!, 2, 1000 + n, established).catch((err: unknown) => {
              process.stderr.write(`stream ${n} failed: ${String(err)}\n`);
              process.exit(1);
            });
          }),
      ),
    );
    opened += batch;
  }
  await sleep(500);
  fullGc();
  const after = footprint();
  return { streams: job.streams, rssBytes: after.rss - before.rss, heapBytes: after.heap - before.heap };
}

const job = JSON.parse(process.argv[2] ?? '{}') as ThroughputJob | SlicesJob | MemoryJob;
if (job.variant.endsWith('-baseline')) await loadBaseline(process.env.BENCH_BASELINE ?? '');
if (job.mode === 'slices') await slices(job);
else
  process.stdout.write(
    `${JSON.stringify(job.mode === 'memory' ? await memory(job) : await throughput(job))}\n`,
  );
// Memory jobs leave their streams open on purpose; leave without waiting for them.
process.exit(0);
