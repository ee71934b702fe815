/**
 * `pnpm bench:openai`: the CPU each OpenAI front end spends per streamed chunk, `trtllm-openai`
 * against openai_trtllm (the Rust peer, when `BENCH_OPENAI_TRTLLM` names its binary), both in
 * front of one fake Triton over gRPC. Writes bench/results/openai.json and the results block of
 * docs/PERFORMANCE.md; `BENCH_OPENAI_MARKDOWN_ONLY=1` re-renders that block from the saved results.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { list, whole } from '../overhead/config.js';
import { describeMachine } from '../overhead/machine.js';
import { hasTaskset, startServerProcess } from '../overhead/processes.js';
import { driveCompletions } from './load.js';
import { type OpenAiResults, writeOpenAiMarkdown } from './markdown.js';
import { type FrontEnd, startFloor, startOurs, startPeer } from './servers.js';

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
const pin = process.env.BENCH_PIN !== '0' && hasTaskset();
// Both front ends share CPU 0; the fake and this load generator share CPU 1.
const serverCpu = pin ? 0 : undefined;
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
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const fake = await startServerProcess(FAKE_SCRIPT, { cpu: pin ? 1 : undefined, ttftMs: 0, itlMs: 0 });
const servers: FrontEnd[] = [];
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
  for (const server of servers) {
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
      const order = repeat % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) {
        const row = await measure(server, streams, repeat);
        rows.push(row);
        process.stderr.write(
          `${row.server} ${streams} streams #${repeat + 1}: ${row.cpuUsPerChunk.toFixed(1)} µs CPU/chunk (${row.systemUsPerChunk.toFixed(1)} system), ${row.writesPerChunk?.toFixed(2) ?? '?'} writes/chunk, ${Math.round(row.chunksPerSec)} chunks/s\n`,
        );
      }
    }
  }
  const summary = levels.map((streams) => {
    const per = Object.fromEntries(
      servers.map((s) => {
        const mine = rows.filter((r) => r.server === s.name && r.streams === streams);
        return [
          s.name,
          {
            cpuUsPerChunk: median(mine.map((r) => r.cpuUsPerChunk)),
            cpuUsPerChunkRuns: mine.map((r) => Number(r.cpuUsPerChunk.toFixed(2))),
            systemUsPerChunk: median(mine.map((r) => r.systemUsPerChunk)),
            ...(mine.every((r) => r.writesPerChunk !== undefined)
              ? { writesPerChunk: median(mine.map((r) => r.writesPerChunk!)) }
              : {}),
            chunksPerSec: median(mine.map((r) => r.chunksPerSec)),
          },
        ];
      }),
    );
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
  const names = servers.map((s) => s.name);
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
    },
    summary,
    runs: rows,
  };
  writeFileSync(RESULT_FILE, `${JSON.stringify(results, null, 2)}\n`);
  await writeOpenAiMarkdown(DOC, results);
  process.stderr.write(`wrote ${RESULT_FILE} and docs/PERFORMANCE.md\n`);
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  await fake.stop();
}
