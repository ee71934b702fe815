/**
 * `pnpm bench:soak [--minutes N]`: TritonLlm over gRPC under a steady mixed load against the fake
 * Triton for N minutes (default 10), each in its own process. Writes bench/results/soak.json (every
 * sample and the summary) and docs/soak.svg. See docs/PERFORMANCE.md "Soak".
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describeMachine } from '../overhead/machine.js';
import { distEnv, startServerProcess } from '../overhead/processes.js';
import type { SoakJob } from './client.js';
import { readSoakConfig } from './config.js';
import type { LoadCounts } from './load.js';
import { soakPlot } from './plot.js';
import { memoryFigures, type SoakSample } from './stats.js';

interface ClientDone {
  readonly counts: LoadCounts;
  readonly drainedAfterS: number;
  readonly baselineTypes: Record<string, number>;
  readonly closedTypes: Record<string, number>;
}

const ended = (s: SoakSample) => s.completed + s.aborted + s.broken + s.stopped + s.failures;

/** A sample, and the requests' rate and mean times since the last line. */
function progressLine(s: SoakSample, last: SoakSample | undefined): string {
  const mb = (b: number) => (b / 2 ** 20).toFixed(1);
  let line = `${s.phase} t=${s.t.toFixed(0)}s rss=${mb(s.rss)}MiB heap=${mb(s.heapUsed)}MiB handles=${s.handles} fds=${s.fds} requests=${ended(s)}`;
  if (s.phase === 'load') {
    const n =
      ended(s) - ended(last ?? { ...s, completed: 0, aborted: 0, broken: 0, stopped: 0, failures: 0 });
    const req = (s.requestSeconds - (last?.requestSeconds ?? 0)) / n;
    const first = (s.firstChunkSeconds - (last?.firstChunkSeconds ?? 0)) / n;
    line += ` (${(n / (s.t - (last?.t ?? 0))).toFixed(1)}/s, ${req.toFixed(2)} s each, first chunk ${first.toFixed(2)} s) streams open ${s.openStreams} waiting ${s.waitingStreams} on ${s.connections} connections`;
  }
  return line;
}

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
// BENCH_SOAK_OUTPUT=<dir> writes both there instead: a trial or a diagnostic run keeps the published ones.
const OUTPUT = process.env.BENCH_SOAK_OUTPUT;
const RESULTS = OUTPUT === undefined ? here('../results/soak.json') : join(OUTPUT, 'soak.json');
const PLOT = OUTPUT === undefined ? here('../../docs/soak.svg') : join(OUTPUT, 'soak.svg');

const config = readSoakConfig(process.argv.slice(2));
const started = new Date();
const load1 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const fakeCpuFile = join(tmpdir(), `soak-fake-cpu-${process.pid}.json`);
process.env.SOAK_FAKE_CPU_FILE = fakeCpuFile;
const server = await startServerProcess(here('./fake-server.ts'), {
  ttftMs: config.ttftMs,
  itlMs: config.itlMs,
});
process.stderr.write(
  `soak: ${config.streams} streams for ${config.minutes} min, fake ITL ${config.itlMs} ms, TTFT ${config.ttftMs} ms, load average ${load1}\n`,
);

const job: SoakJob = {
  grpcUrl: server.grpcUrl,
  minutes: config.minutes,
  streams: config.streams,
  sampleSeconds: config.sampleSeconds,
  seed: config.seed,
  gcBeforeSample: process.env.BENCH_SOAK_GC === '1',
};
const samples: SoakSample[] = [];
let done: ClientDone | undefined;
const clientExit = await new Promise<{ code: number | null; exitedOnItsOwn: boolean }>((resolve, reject) => {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', here('./client.ts'), JSON.stringify(job)],
    { stdio: ['ignore', 'pipe', 'inherit'], env: distEnv() },
  );
  let reported: SoakSample | undefined;
  let kill: NodeJS.Timeout | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const msg = JSON.parse(line) as { sample?: SoakSample; done?: ClientDone };
    if (msg.sample !== undefined) {
      const s = msg.sample;
      samples.push(s);
      if (s.phase !== 'load' || s.t - (reported?.t ?? 0) >= 60) {
        process.stderr.write(`soak: ${progressLine(s, reported)}\n`);
        reported = s.phase === 'load' ? s : undefined;
      }
    }
    if (msg.done !== undefined) {
      done = msg.done;
      // A client with nothing left open exits by itself; one that does not is kept alive by a leak.
      kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    }
  });
  child.on('error', reject);
  child.on('exit', (code, signal) => {
    clearTimeout(kill);
    resolve({ code, exitedOnItsOwn: signal === null });
  });
});
await server.stop();
const fake = JSON.parse(readFileSync(fakeCpuFile, 'utf8')) as { cpuUs: number; uptimeS: number };
rmSync(fakeCpuFile, { force: true });
if (done === undefined) throw new Error(`the soak client exited with ${clientExit.code} before its end`);

const loadSeconds = config.minutes * 60;
const memory = memoryFigures(samples, loadSeconds);
const { rss, heapUsed: heap, external } = memory;
const fitted = samples.filter((s) => s.phase === 'load' && s.t >= rss.warmupSeconds);
const baseline = samples.filter((s) => s.phase === 'baseline').at(-1)!;
const closed = samples.filter((s) => s.phase === 'closed').at(-1)!;
const lastLoad = samples.filter((s) => s.phase === 'load').at(-1)!;
const c = done.counts;
const requests = c.completed + c.aborted + c.broken + c.stopped;
const summary = {
  loadSeconds,
  requests,
  counts: c,
  tokensPerSecond: Math.round(c.tokens / lastLoad.t),
  clientCpuCores: Number((lastLoad.cpuUs / 1e6 / lastLoad.t).toFixed(3)),
  fakeCpuCores: Number((fake.cpuUs / 1e6 / fake.uptimeS).toFixed(3)),
  drainedAfterS: Number(done.drainedAfterS.toFixed(2)),
  ...memory,
  handles: {
    baseline: baseline.handles,
    final: closed.handles,
    maxUnderLoad: Math.max(...fitted.map((s) => s.handles)),
  },
  fds: { baseline: baseline.fds, final: closed.fds, maxUnderLoad: Math.max(...fitted.map((s) => s.fds)) },
  resourceTypes: { baseline: done.baselineTypes, final: done.closedTypes },
  clientExitedOnItsOwn: clientExit.exitedOnItsOwn && clientExit.code === 0,
};
const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
const dirty = spawnSync('git', ['status', '--porcelain', 'packages/core/src', 'packages/grpc/src'], {
  encoding: 'utf8',
}).stdout.trim();
const result = {
  config: { ...config, gcBeforeSample: job.gcBeforeSample },
  machine: { ...describeMachine({ pinned: false }), loadAverageAtStart: load1 },
  started: started.toISOString(),
  commit,
  uncommittedInCoreOrGrpc: dirty === '' ? [] : dirty.split('\n'),
  summary,
  samples,
};
writeFileSync(RESULTS, `${JSON.stringify(result, null, 1)}\n`);
writeFileSync(PLOT, soakPlot(result));
const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
process.stdout.write(
  [
    `requests ${requests} (completed ${c.completed}, aborted ${c.aborted}, break ${c.broken}, stop() ${c.stopped}), failures ${c.failures}`,
    `tokens/s ${summary.tokensPerSecond}; CPU cores: client ${summary.clientCpuCores}, fake ${summary.fakeCpuCores}`,
    `RSS after warm-up: ${rss.percentPerHour.toFixed(2)} ± ${rss.stderrPercentPerHour.toFixed(2)} %/h (${mb(rss.bytesPerHour)}/h), floors of the tenths ${rss.floorsPercentPerHour.toFixed(2)} %/h, max ${mb(rss.max)}`,
    `heap used: ${heap.percentPerHour.toFixed(2)} %/h (floors ${heap.floorsPercentPerHour.toFixed(2)} %/h), max ${mb(heap.max)}; external: ${external.percentPerHour.toFixed(2)} %/h`,
    `handles ${baseline.handles} -> ${closed.handles}, fds ${baseline.fds} -> ${closed.fds}, client exited on its own: ${summary.clientExitedOnItsOwn}`,
    `wrote ${RESULTS} and ${PLOT}`,
    '',
  ].join('\n'),
);
if (c.failures > 0) {
  process.stderr.write(
    `soak: ${c.failures} requests failed, e.g.:\n${c.failureExamples.slice(0, 5).join('\n')}\n`,
  );
  process.exitCode = 1;
}
