/**
 * Child process of the soak benchmark: the client under test, alone in its process so that its
 * memory, handles and file descriptors are its own. Reads a JSON job from argv[2]; prints one JSON
 * line per sample as `{"sample":…}` and, last, `{"done":…}` with the request counts.
 *
 * Baseline samples are taken before the client exists; then the load runs for `minutes`; then the
 * requests in flight finish, the client closes, and the closing samples show what it left behind.
 */
import { readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type GrpcTransport, grpcTransport } from '@trtllm/grpc';
import { SoakLoad } from './load.js';
import type { SoakSample } from './stats.js';

export interface SoakJob {
  readonly grpcUrl: string;
  readonly minutes: number;
  readonly streams: number;
  readonly sampleSeconds: number;
  readonly seed: number;
  /** Collect garbage before every sample (needs --expose-gc): the live set, not what GC has yet to free. */
  readonly gcBeforeSample: boolean;
}

const job = JSON.parse(process.argv[2] ?? '{}') as SoakJob;
const gc = (globalThis as { gc?: () => void }).gc;
if (job.gcBeforeSample && gc === undefined) throw new Error('gcBeforeSample needs node --expose-gc');

function fdCount(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return -1;
  }
}

/** Active resources by type (TCPSocketWrap, Timeout, ...), for a closing count that differs from the baseline. */
function resourceTypes(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1;
  return out;
}

let load: SoakLoad | undefined;
let transport: GrpcTransport | undefined;
let phase: SoakSample['phase'] = 'baseline';
let t0 = performance.now();
let cpu0 = process.cpuUsage();

function sample(): void {
  if (job.gcBeforeSample) gc!();
  const m = process.memoryUsage();
  const c = load?.counts;
  const cpu = process.cpuUsage(cpu0);
  const h2 = phase === 'load' ? transport?.connectionStats() : undefined;
  const s: SoakSample = {
    t: Math.round(performance.now() - t0) / 1000,
    phase,
    rss: m.rss,
    heapUsed: m.heapUsed,
    external: m.external + m.arrayBuffers,
    handles: process.getActiveResourcesInfo().length,
    fds: fdCount(),
    completed: c?.completed ?? 0,
    aborted: c?.aborted ?? 0,
    broken: c?.broken ?? 0,
    stopped: c?.stopped ?? 0,
    tokens: c?.tokens ?? 0,
    cpuUs: phase === 'baseline' ? 0 : cpu.user + cpu.system,
    failures: c?.failures ?? 0,
    requestSeconds: c?.requestSeconds ?? 0,
    firstChunkSeconds: c?.firstChunkSeconds ?? 0,
    connections: h2?.connections ?? 0,
    openStreams: h2?.openStreams ?? 0,
    waitingStreams: h2?.waitingStreams ?? 0,
  };
  process.stdout.write(`${JSON.stringify({ sample: s })}\n`);
}

// Baseline and closing samples are taken alike, each right after a wait of ours has ended, so that
// no timer of the benchmark's own is pending in either count.
await sleep(1000);
for (let i = 0; i < 3; i++) {
  sample();
  await sleep(1000);
}
const baselineTypes = resourceTypes();

transport = grpcTransport({ baseUrl: job.grpcUrl });
load = new SoakLoad(transport, job.seed);
phase = 'load';
t0 = performance.now();
cpu0 = process.cpuUsage();
const timer = setInterval(sample, job.sampleSeconds * 1000);
const deadline = t0 + job.minutes * 60_000;
await load.run(job.streams, () => performance.now() >= deadline);
const drainedAfterS = (performance.now() - deadline) / 1000;
clearInterval(timer);
sample();
await transport.close();
phase = 'closed';
// Sockets and timers of a closed client go away within a turn or two; wait a few seconds to be fair.
await sleep(3000);
for (let i = 0; i < 3; i++) {
  sample();
  await sleep(1000);
}
const closedTypes = resourceTypes();
process.stdout.write(
  `${JSON.stringify({ done: { counts: load.counts, drainedAfterS, baselineTypes, closedTypes } })}\n`,
);
