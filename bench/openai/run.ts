/**
 * `pnpm bench:openai`: the CPU each OpenAI front end spends per streamed chunk, `trtllm-openai`
 * against openai_trtllm (the Rust peer, when `BENCH_OPENAI_TRTLLM` names its binary), both in
 * front of one fake Triton over gRPC. Writes bench/results/openai.json and the results block of
 * docs/PERFORMANCE.md; `BENCH_OPENAI_MARKDOWN_ONLY=1` re-renders that block from the saved results.
 * A second part measures throughput on every core: `trtllm-openai` with 1 and with 2 workers
 * (`BENCH_OPENAI_WORKERS`) beside the peer, each front end allowed every CPU.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { list, numbers, whole } from '../overhead/config.js';
import { describeMachine } from '../overhead/machine.js';
import { hasTaskset, startServerProcess } from '../overhead/processes.js';
import { driveCompletions } from './load.js';
import { type OpenAiResults, writeOpenAiMarkdown } from './markdown.js';
import { type Cpus, type FrontEnd, startFloor, startOurs, startPeer } from './servers.js';

const FAKE_SCRIPT = fileURLToPath(new URL('../overhead/fake-server.ts', import.meta.url));
const RESULT_FILE = fileURLToPath(new URL('../results/openai.json', import.meta.url));
const DOC = fileURLToPath(new URL('../../docs/PERFORMANCE.md', import.meta.url));

// Re-renders the doc block from the last results, e.g. after a change to how they are rendered.
if (process.env.BENCH_OPENAI_MARKDOWN_ONLY === '1') {
  await writeOpenAiMarkdown(DOC, JSON.parse(readFileSync(RESULT_FILE, 'utf8')) as OpenAiResults);
  process.stderr.write(`docs/PERFORMANCE.md re-rendered from ${RESULT_FILE}\n`);
  process.exit(0);
}

const levels = list('BENCH_OPENAI_LEVELS', [64, 256]);
const maxTokens = whole('BENCH_MAX_TOKENS', 32);
// Chunks per measured window: at 100 clock ticks a second, 64,000 chunks at ~10 µs is 64 ticks.
const chunksPerRun = whole('BENCH_OPENAI_CHUNKS', 64_000);
const warmupRequests = whole('BENCH_OPENAI_WARMUP', 2_000);
const repeats = whole('BENCH_OPENAI_REPEATS', 3);
const peerBinary = process.env.BENCH_OPENAI_TRTLLM;
// Another build of our CLI (its dist/cli.js), measured beside the current one: before and after a change.
const baselineCli = process.env.BENCH_OPENAI_BASELINE;
// The floors (node-floor.ts on node:http, net-floor.ts on node:net) beside them unless BENCH_OPENAI_FLOOR=0:
// what Node itself costs, with node:http and without.
const withFloor = process.env.BENCH_OPENAI_FLOOR !== '0';
// `--workers` counts of the throughput part (trtllm-openai beside the peer, every CPU allowed to each); 0 skips it.
const workerCounts = numbers('BENCH_OPENAI_WORKERS', [1, 2]);
if (workerCounts.some((n) => n > 256)) {
  throw new Error(`BENCH_OPENAI_WORKERS: --workers takes 1 to 256 (got ${process.env.BENCH_OPENAI_WORKERS})`);
}
const pin = process.env.BENCH_PIN !== '0' && hasTaskset();
// Both front ends share CPU 0; the fake and this load generator share CPU 1.
const serverCpu = pin ? 0 : undefined;
// The throughput part: every CPU to each front end, the set the peer's tokio sizes its threads to; the fake
// and the load generator stay on CPU 1 for all of them.
const cores = availableParallelism();
const everyCpu: Cpus = pin ? `0-${cores - 1}` : undefined;
if (pin) spawnSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });

interface Measurement {
  readonly server: string;
  readonly streams: number;
  readonly repeat: number;
  readonly requests: number;
  readonly events: number;
  readonly textChunks: number;
  readonly wallMs: number;
  readonly serverCpuMs: number;
  readonly cpuUsPerChunk: number;
  /** The kernel's part of cpuUsPerChunk. */
  readonly systemUsPerChunk: number;
  /** Write system calls per chunk: how many chunks share a socket write. */
  readonly writesPerChunk: number | undefined;
  readonly chunksPerSec: number;
  /** The front end's CPU over the window's wall time: how many cores it kept busy. */
  readonly coresBusy: number;
}

async function measure(server: FrontEnd, streams: number, repeat: number): Promise<Measurement> {
  const requests = Math.max(streams * 2, Math.ceil(chunksPerRun / maxTokens));
  const before = server.cpuMs();
  const systemBefore = server.systemMs();
  const writesBefore = server.writeCalls();
  const load = await driveCompletions({
    baseUrl: server.baseUrl,
    model: 'ensemble',
    concurrency: streams,
    requests,
    maxTokens,
  });
  const serverCpuMs = server.cpuMs() - before;
  const systemMs = server.systemMs() - systemBefore;
  const writesAfter = server.writeCalls();
  if (load.textChunks !== load.requests * maxTokens) {
    throw new Error(
      `${server.name}: ${load.textChunks} text chunks for ${load.requests} requests of ${maxTokens} tokens`,
    );
  }
  return {
    server: server.name,
    streams,
    repeat,
    ...load,
    serverCpuMs,
    cpuUsPerChunk: (serverCpuMs * 1000) / load.textChunks,
    systemUsPerChunk: (systemMs * 1000) / load.textChunks,
    writesPerChunk:
      writesBefore !== undefined && writesAfter !== undefined
        ? (writesAfter - writesBefore) / load.textChunks
        : undefined,
    chunksPerSec: (load.textChunks * 1000) / load.wallMs,
    coresBusy: serverCpuMs / load.wallMs,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Warms each server up, then measures them at every level, `repeats` times with the windows interleaved. */
async function measureAll(group: readonly FrontEnd[]): Promise<Measurement[]> {
  for (const server of group) {
    // JIT (ours) and connection pools (both) settle before anything is counted.
    await driveCompletions({
      baseUrl: server.baseUrl,
      model: 'ensemble',
      concurrency: 64,
      requests: warmupRequests,
      maxTokens,
    });
    process.stderr.write(`${server.name}: warmed up with ${warmupRequests} requests\n`);
  }
  const rows: Measurement[] = [];
  for (let repeat = 0; repeat < repeats; repeat++) {
    for (const streams of levels) {
      // Alternate which server goes first, so drift in the machine's load spreads over both.
      const order = repeat % 2 === 0 ? group : [...group].reverse();
      for (const server of order) {
        const row = await measure(server, streams, repeat);
        rows.push(row);
        process.stderr.write(
          `${row.server} ${streams} streams #${repeat + 1}: ${row.cpuUsPerChunk.toFixed(1)} µs CPU/chunk (${row.systemUsPerChunk.toFixed(1)} system), ${row.writesPerChunk?.toFixed(2) ?? '?'} writes/chunk, ${Math.round(row.chunksPerSec)} chunks/s, ${row.coresBusy.toFixed(2)} cores\n`,
        );
      }
    }
  }
  return rows;
}

const oursWorkers = (n: number): string => `trtllm-openai, ${n} worker${n === 1 ? '' : 's'}`;
const PEER_EVERY_CPU = 'openai_trtllm, every CPU';

const fake = await startServerProcess(FAKE_SCRIPT, { cpu: pin ? 1 : undefined, ttftMs: 0, itlMs: 0 });
const servers: FrontEnd[] = [];
const wide: FrontEnd[] = [];
try {
  servers.push(await startOurs(fake.grpcUrl, serverCpu));
  if (baselineCli !== undefined && baselineCli !== '') {
    servers.push(await startOurs(fake.grpcUrl, serverCpu, 'trtllm-openai (baseline)', baselineCli));
  }
  if (withFloor) {
    servers.push(await startFloor('node floor', fake.grpcUrl, serverCpu));
    servers.push(await startFloor('net floor', fake.grpcUrl, serverCpu));
  }
  if (peerBinary !== undefined && peerBinary !== '')
    servers.push(await startPeer(peerBinary, fake.grpcUrl, serverCpu));
  const rows = await measureAll(servers);
  // The pinned front ends stop before the throughput part, so idle ones hold no memory or timers beside it.
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  let throughputRows: Measurement[] = [];
  if (workerCounts.length > 0) {
    for (const n of workerCounts)
      wide.push(await startOurs(fake.grpcUrl, everyCpu, oursWorkers(n), undefined, n));
    if (peerBinary !== undefined && peerBinary !== '')
      wide.push(await startPeer(peerBinary, fake.grpcUrl, everyCpu, PEER_EVERY_CPU));
    throughputRows = await measureAll(wide);
  }
  const summarize = (group: readonly Measurement[], streams: number) => {
    const names = [...new Set(group.map((r) => r.server))];
    return Object.fromEntries(
      names.map((name) => {
        const mine = group.filter((r) => r.server === name && r.streams === streams);
        return [
          name,
          {
            cpuUsPerChunk: median(mine.map((r) => r.cpuUsPerChunk)),
            cpuUsPerChunkRuns: mine.map((r) => Number(r.cpuUsPerChunk.toFixed(2))),
            systemUsPerChunk: median(mine.map((r) => r.systemUsPerChunk)),
            ...(mine.every((r) => r.writesPerChunk !== undefined)
              ? { writesPerChunk: median(mine.map((r) => r.writesPerChunk!)) }
              : {}),
            chunksPerSec: median(mine.map((r) => r.chunksPerSec)),
            chunksPerSecRuns: mine.map((r) => Math.round(r.chunksPerSec)),
            coresBusy: median(mine.map((r) => r.coresBusy)),
          },
        ];
      }),
    );
  };
  const summary = levels.map((streams) => {
    const per = summarize(rows, streams);
    const ours = per['trtllm-openai']?.cpuUsPerChunk;
    const peer = per.openai_trtllm?.cpuUsPerChunk;
    const floor = per['node floor']?.cpuUsPerChunk;
    const netFloor = per['net floor']?.cpuUsPerChunk;
    return {
      streams,
      ...per,
      ...(ours !== undefined && peer !== undefined ? { oursOverPeer: ours / peer } : {}),
      ...(ours !== undefined && floor !== undefined ? { oursOverFloor: ours / floor } : {}),
      ...(floor !== undefined && peer !== undefined ? { floorOverPeer: floor / peer } : {}),
      ...(netFloor !== undefined && peer !== undefined ? { netFloorOverPeer: netFloor / peer } : {}),
    };
  });
  const names = [...new Set(rows.map((r) => r.server))];
  const ratios = (
    [
      ['oursOverPeer', 'ours / peer'],
      ['oursOverFloor', 'ours / floor'],
      ['floorOverPeer', 'floor / peer'],
      ['netFloorOverPeer', 'net floor / peer'],
    ] as const
  ).filter(([key]) => summary.some((row) => key in row));
  const lines = [
    `| streams | ${[...names.map((n) => `${n} µs CPU/chunk (runs)`), ...ratios.map(([, label]) => label)].join(' | ')} |`,
    `|---|${[...names, ...ratios].map(() => '---').join('|')}|`,
    ...summary.map((row) => {
      const cells = names.map((n) => {
        const s = (row as unknown as Record<string, { cpuUsPerChunk: number; cpuUsPerChunkRuns: number[] }>)[
          n
        ]!;
        return `${s.cpuUsPerChunk.toFixed(1)} (${s.cpuUsPerChunkRuns.map((v) => v.toFixed(1)).join(', ')})`;
      });
      const shares = ratios.map(([key]) => (row as Record<string, unknown>)[key] as number | undefined);
      return `| ${row.streams} | ${[...cells, ...shares.map((v) => v?.toFixed(2) ?? 'n/a')].join(' | ')} |`;
    }),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const throughput =
    throughputRows.length === 0
      ? undefined
      : {
          cpus: everyCpu ?? 'unpinned',
          workers: workerCounts,
          summary: levels.map((streams) => ({ streams, ...summarize(throughputRows, streams) })),
        };
  if (throughput !== undefined) {
    for (const streams of levels) {
      const cells = Object.entries(summarize(throughputRows, streams)).map(
        ([name, f]) =>
          `${name} ${Math.round(f.chunksPerSec)} chunks/s (${f.cpuUsPerChunk.toFixed(1)} µs/chunk, ${f.coresBusy.toFixed(2)} cores)`,
      );
      process.stdout.write(`every CPU, ${streams} streams: ${cells.join('; ')}\n`);
    }
  }
  mkdirSync(fileURLToPath(new URL('../results/', import.meta.url)), { recursive: true });
  const results = {
    machine: describeMachine({ pinned: pin }),
    settings: {
      levels,
      maxTokens,
      chunksPerRun,
      warmupRequests,
      repeats,
      peer: peerBinary !== undefined,
      floor: withFloor,
      workers: workerCounts,
    },
    summary,
    ...(throughput !== undefined ? { throughput } : {}),
    runs: [...rows, ...throughputRows],
  };
  writeFileSync(RESULT_FILE, `${JSON.stringify(results, null, 2)}\n`);
  await writeOpenAiMarkdown(DOC, results);
  process.stderr.write(`wrote ${RESULT_FILE} and docs/PERFORMANCE.md\n`);
} finally {
  await Promise.all([...servers, ...wide].map((s) => s.stop()));
  await fake.stop();
}
