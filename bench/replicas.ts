/**
 * `pnpm bench:replicas`: throughput of one TritonLlm over 1, 2 and 3 replicas, each a fake Triton
 * in a process of its own (see replicas/replica-process.ts). Two settings:
 * - capacity-bound: each replica runs at most SLOTS generations at once, paced at ITL_MS per
 *   token, and queues the rest, as a GPU replica's in-flight batcher does. Adding replicas adds
 *   capacity; the table shows how much of it the balancing turns into throughput.
 * - full speed: the fakes generate as fast as they can, so the client and the machine's cores are
 *   the limit, and the table shows where that ceiling is.
 * Ratios are against 1 endpoint measured in the same run. Writes bench/results/replicas.json and the
 * block between the replicas markers of docs/PERFORMANCE.md (`--dry`: neither). Never fails on
 * numbers. Env: REPLICAS_SECONDS (default 5), REPLICAS_CONCURRENCY (default 12).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type ReplicaTransport, TritonLlm } from '@trtllm/sdk';
import { writeGeneratedBlock } from './markdown.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REPLICA = join(ROOT, 'bench', 'replicas', 'replica-process.ts');
const DOC = join(ROOT, 'docs', 'PERFORMANCE.md');
const START = '<!-- replicas-results:start (written by pnpm bench:replicas; edits inside are lost) -->';
const END = '<!-- replicas-results:end -->';
const SECONDS = Number(process.env.REPLICAS_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.REPLICAS_CONCURRENCY ?? 12);
const WARMUP_MS = 1000;
const MAX_TOKENS = 50;
const MODEL = 'ensemble';
const SLOTS = 4;
const LOAD_BEFORE = loadavg()[0]!.toFixed(1);
const ITL_MS = 10;

interface Setting {
  readonly name: 'capacity-bound' | 'full speed';
  readonly protocols: readonly ('grpc' | 'http')[];
  readonly args: readonly string[];
}

// The gate that limits a replica's capacity speaks HTTP/1.1 only; the balancing is the same code
// for both protocols.
const SETTINGS: readonly Setting[] = [
  {
    name: 'capacity-bound',
    protocols: ['http'],
    args: ['--slots', String(SLOTS), '--itl-ms', String(ITL_MS)],
  },
  { name: 'full speed', protocols: ['grpc', 'http'], args: ['--slots', '0'] },
];
// Linux reports process CPU time in clock ticks of 1/100 s (getconf CLK_TCK).
const TICKS_PER_SECOND = 100;

interface Server {
  readonly child: ChildProcess;
  readonly grpcUrl: string;
  readonly httpUrl: string;
}

interface Row {
  readonly setting: Setting['name'];
  readonly protocol: 'grpc' | 'http';
  readonly endpoints: number;
  readonly tokensPerSecond: number;
  readonly ratio: number;
  readonly requestShare: readonly number[];
  readonly clientCpuPercent: number;
  readonly serverCpuPercent: readonly number[];
  readonly machineBusyPercent: number;
}

async function startServer(args: readonly string[]): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', REPLICA, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const line = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`a replica exited with ${code} before listening`)));
  });
  const match = /grpc (\S+) http (\S+)$/.exec(line);
  if (match === null) throw new Error(`unexpected first line from a replica: ${line}`);
  return { child, grpcUrl: match[1]!, httpUrl: match[2]! };
}

async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Streams with `concurrency` callers until `ms` have passed; returns the tokens generated. */
async function drive(llm: TritonLlm, ms: number): Promise<number> {
  const until = performance.now() + ms;
  let tokens = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = 0; performance.now() < until; i++) {
        for await (const chunk of llm.stream({
          prompt: `What is ML? ${worker} ${i}`,
          maxTokens: MAX_TOKENS,
        })) {
          if (chunk.done) tokens += chunk.usage.completionTokens ?? 0;
        }
      }
    }),
  );
  return tokens;
}

async function measure(
  setting: Setting['name'],
  protocol: 'grpc' | 'http',
  servers: readonly Server[],
): Promise<Omit<Row, 'ratio'>> {
  const baseUrls = servers.map((s) => (protocol === 'grpc' ? s.grpcUrl : s.httpUrl));
  const options = { baseUrls, model: MODEL, healthIntervalMs: 1000 };
  const transport: ReplicaTransport = protocol === 'grpc' ? grpcTransport(options) : httpTransport(options);
  const llm = new TritonLlm({ transport, model: MODEL });
  try {
    await drive(llm, WARMUP_MS);
    const requestsBefore = transport.endpointStats().map((s) => s.requests);
    const serverBefore = await Promise.all(servers.map((s) => cpuSeconds(s.child.pid!)));
    const clientBefore = process.cpuUsage();
    const started = performance.now();
    const tokens = await drive(llm, SECONDS * 1000);
    const wall = (performance.now() - started) / 1000;
    const client = process.cpuUsage(clientBefore);
    const serverAfter = await Promise.all(servers.map((s) => cpuSeconds(s.child.pid!)));
    const requests = transport.endpointStats().map((s, i) => s.requests - (requestsBefore[i] ?? 0));
    const total = requests.reduce((a, b) => a + b, 0);
    const clientCpu = (client.user + client.system) / 1e6 / wall;
    const serverCpu = serverAfter.map((after, i) => (after - serverBefore[i]!) / wall);
    return {
      setting,
      protocol,
      endpoints: servers.length,
      tokensPerSecond: Math.round(tokens / wall),
      requestShare: requests.map((r) => Math.round((100 * r) / total)),
      clientCpuPercent: Math.round(100 * clientCpu),
      serverCpuPercent: serverCpu.map((c) => Math.round(100 * c)),
      machineBusyPercent: Math.round(
        (100 * (clientCpu + serverCpu.reduce((a, b) => a + b, 0))) / cpus().length,
      ),
    };
  } finally {
    await transport.close();
  }
}

function markdown(rows: readonly Row[]): string {
  const table = (setting: Setting['name']) => [
    '| protocol | endpoints | tokens/s | vs 1 endpoint | requests per endpoint (%) | client CPU % | replica CPU % | machine busy % |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows
      .filter((r) => r.setting === setting)
      .map(
        (r) =>
          `| ${r.protocol} | ${r.endpoints} | ${r.tokensPerSecond.toLocaleString('en-US')} | ${r.ratio.toFixed(2)}x | ` +
          `${r.requestShare.join(' / ')} | ${r.clientCpuPercent} | ${r.serverCpuPercent.join(' / ')} | ${r.machineBusyPercent} |`,
      ),
  ];
  return [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ` +
      `Node ${process.version}, by \`pnpm bench:replicas\`. Each replica is a fake Triton (\`@trtllm/testing\`) in a ` +
      `process of its own; one TritonLlm client (\`grpcTransport\`/\`httpTransport\` with \`baseUrls\`) runs ` +
      `${CONCURRENCY} concurrent streams of \`${MODEL}\` (max_tokens ${MAX_TOKENS}) for ${SECONDS} s after ` +
      `${WARMUP_MS / 1000} s of warm-up. CPU % is of one core; "machine busy" is client plus replicas over all cores ` +
      `(other work on the machine is not counted: the 1-minute load average was ${LOAD_BEFORE} when the run began).`,
    '',
    `**Capacity-bound replicas**: each runs at most ${SLOTS} generations at once at ${ITL_MS} ms per token and ` +
      `queues the rest, like a GPU replica's in-flight batcher (a ${SLOTS}-slot gate in front of the fake's HTTP port). ` +
      `One replica can give at most ${Math.round((SLOTS * 1000) / ITL_MS)} tokens/s, n replicas n times that.`,
    '',
    ...table('capacity-bound'),
    '',
    '**Full-speed replicas**: the fakes generate as fast as they are read, so the client and the two cores are the limit.',
    '',
    ...table('full speed'),
  ].join('\n');
}

function writeDoc(block: string): Promise<void> {
  const fresh = `${START}\n${block}\n${END}`;
  // Only appended under its own heading: other sections of this file belong to other benchmarks.
  return writeGeneratedBlock(DOC, { start: START, end: END }, fresh, {
    missing: '# Performance\n',
    appended: `## Replicas\n\n${fresh}`,
  });
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const setting of SETTINGS) {
    const servers = await Promise.all([0, 1, 2].map(() => startServer(setting.args)));
    try {
      for (const protocol of setting.protocols) {
        let baseline: number | undefined;
        for (const n of [1, 2, 3]) {
          const row = await measure(setting.name, protocol, servers.slice(0, n));
          baseline ??= row.tokensPerSecond;
          rows.push({ ...row, ratio: row.tokensPerSecond / baseline });
          console.log(
            `${setting.name} ${protocol} ${n} endpoint(s): ${row.tokensPerSecond} tokens/s, requests ` +
              `${row.requestShare.join('/')} %, client ${row.clientCpuPercent} % CPU, replicas ` +
              `${row.serverCpuPercent.join('/')} %, machine ${row.machineBusyPercent} %`,
          );
        }
      }
    } finally {
      for (const s of servers) s.child.kill('SIGTERM');
    }
  }
  const block = markdown(rows);
  console.log(`\n${block}`);
  if (process.argv.includes('--dry')) return;
  await mkdir(join(ROOT, 'bench', 'results'), { recursive: true });
  await writeFile(
    join(ROOT, 'bench', 'results', 'replicas.json'),
    `${JSON.stringify({ date: new Date().toISOString(), concurrency: CONCURRENCY, seconds: SECONDS, slots: SLOTS, itlMs: ITL_MS, rows }, null, 2)}\n`,
  );
  await writeDoc(block);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
