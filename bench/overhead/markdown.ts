import { markdownTable as table, writeGeneratedBlock } from '../markdown.js';
import type { ColdStartResults } from './cold-start.js';
import type { InterleavedResults } from './interleaved.js';
import { withinEngines } from './machine.js';
import {
  byVariant,
  type MemoryRow,
  type OverheadResults,
  type TargetCheck,
  type ThroughputRow,
} from './results.js';
import type { SideBySideResults } from './side-by-side.js';
import { type StreamLimitResults, semiSpaceFlag, streamLimitLabel } from './stream-limit.js';

const START = '<!-- overhead-results:start (written by pnpm bench:overhead; edits inside are lost) -->';
const END = '<!-- overhead-results:end -->';

const n0 = (v: number) => Math.round(v).toLocaleString('en-US');
const n2 = (v: number) => v.toFixed(2);
const kb = (v: number | null) => (v === null ? 'n/a' : (v / 1024).toFixed(1));
/** RSS growth per stream: the median, and each run's in parentheses when there were several. */
const rssKb = (m: MemoryRow) =>
  m.rssBytesPerStreamRuns === undefined
    ? kb(m.rssBytesPerStream)
    : `${kb(m.rssBytesPerStream)} (${m.rssBytesPerStreamRuns.map(kb).join(', ')})`;

function targetValue(t: TargetCheck): string {
  switch (t.unit) {
    case 'bytes':
      return `${kb(t.value)} KB`;
    case 'us':
      return `${t.value.toFixed(1)} µs`;
    case 'share':
      return `${(t.value * 100).toFixed(1)} %`;
    case 'ratio':
      return `${t.value.toFixed(2)}x`;
  }
}

/**
 * One row per client in first-seen order and one cell per level: the levels run across the table,
 * so three levels take one table of a dozen rows, not three (docs/PERFORMANCE.md stays short).
 */
function byClient<T extends { readonly label: string }>(
  items: readonly T[],
  levelOf: (item: T) => number,
): { levels: number[]; rows: [string, Map<number, T>][] } {
  const levels = [...new Set(items.map(levelOf))];
  const rows = new Map<string, Map<number, T>>();
  for (const item of items) {
    const row = rows.get(item.label) ?? new Map<number, T>();
    row.set(levelOf(item), item);
    rows.set(item.label, row);
  }
  return { levels, rows: [...rows] };
}

/** The cell of `level` in a row of {@link byClient}, or `-` where that client did not run there. */
function cellAt<T>(row: Map<number, T>, level: number, text: (item: T) => string): string {
  const item = row.get(level);
  return item === undefined ? '-' : text(item);
}

/** The generated part of docs/PERFORMANCE.md: machine, throughput, memory, targets. */
export function resultsMarkdown(r: OverheadResults): string {
  const m = r.machine;
  const machine = [
    `Measured ${m.date.slice(0, 10)} on ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}; Node ${m.node}` +
      (m.nodeEngines !== undefined && !withinEngines(m.node, m.nodeEngines)
        ? ` (outside the packages' engines, ${m.nodeEngines})`
        : '') +
      (m.python !== undefined ? `, Python ${m.python}, tritonclient ${m.tritonclient}` : '') +
      '.',
    m.pinned
      ? 'The fake server ran pinned to CPU 0 and each client (its own process) to CPU 1 (taskset).'
      : 'Server and clients were not pinned to cores.',
    `Fake server: ${r.config.fakeServer}. Each run: \`max_tokens\` ${r.config.maxTokens}, about ` +
      `${n0(r.config.tokens)} tokens (at least two requests per stream), after ` +
      (r.config.nodeWarmup === undefined
        ? `${r.config.warmup} warm-up requests`
        : `${n0(r.config.nodeWarmup)} warm-up requests (Node clients; ${r.config.warmup} for Python and ` +
          'perf_analyzer, which do not compile as they run)') +
      (r.config.repeats > 1 ? `; ${r.config.repeats} runs per cell, medians shown.` : '; one run per cell.'),
  ].join(' ');
  // Runs before warm-up was measured have no such columns.
  const warmups = r.throughput.some((t) => t.warmupCpuUsPerToken !== undefined);
  const cpu = byClient(r.throughput, (t) => t.concurrency);
  const throughput = table(
    [
      'client',
      ...cpu.levels.map((l) => `µs/token at ${n0(l)}`),
      ...cpu.levels.map((l) => `tokens/s at ${n0(l)}`),
      ...(warmups ? cpu.levels.map((l) => `µs/token in warm-up at ${n0(l)}`) : []),
    ],
    cpu.rows.map(([label, row]) => [
      label,
      ...cpu.levels.map((l) => cellAt(row, l, (t) => n2(t.cpuUsPerToken))),
      ...cpu.levels.map((l) => cellAt(row, l, (t) => n0(t.tokensPerSec))),
      ...(warmups
        ? cpu.levels.map((l) =>
            cellAt(row, l, (t) => (t.warmupCpuUsPerToken === undefined ? '-' : n2(t.warmupCpuUsPerToken))),
          )
        : []),
    ]),
  );
  // Results from before memory runs were repeated measured the whole RSS (see results.ts MemoryRow).
  const youngLeftOut = r.config.memoryRepeats !== undefined;
  const repeated = r.memory.some((x) => x.rssBytesPerStreamRuns !== undefined);
  const idle = byClient(r.memory, (x) => x.streams);
  const memory = table(
    [
      'client',
      ...idle.levels.map((l) => `RSS at ${n0(l)}${repeated ? ', median (runs)' : ''}`),
      ...idle.levels.map((l) => `heap at ${n0(l)}`),
    ],
    idle.rows.map(([label, row]) => [
      label,
      ...idle.levels.map((l) => cellAt(row, l, rssKb)),
      ...idle.levels.map((l) => cellAt(row, l, (x) => kb(x.heapBytesPerStream))),
    ]),
  );
  const missed = r.targets.filter((t) => !t.met);
  const targets = [
    `${r.targets.length - missed.length} of ${r.targets.length} targets met (\`bench/overhead/targets.ts\`)` +
      (missed.length === 0 ? '.' : '; missed:'),
    ...(missed.length === 0
      ? []
      : [
          '',
          table(
            ['target (TritonLlm over gRPC unless named)', 'streams', 'measured'],
            missed.map((t) => [t.target, n0(t.level), targetValue(t)]),
          ),
        ]),
  ].join('\n');
  // A cell that failed in every repeat is one line, with its count.
  const failed = new Map<string, number>();
  for (const f of r.failures) {
    const line = `${f.variant} ${f.mode} at ${f.level}: ${f.error.split('\n')[0]}`;
    failed.set(line, (failed.get(line) ?? 0) + 1);
  }
  const failures =
    failed.size === 0
      ? ''
      : `\n\nRuns that failed:\n\n${[...failed].map(([line, count]) => `- ${line}${count > 1 ? ` (${count} runs)` : ''}`).join('\n')}`;
  const limit =
    r.streamLimit === undefined
      ? []
      : ["#### Past a server's stream limit", '', streamLimitMarkdown(r.streamLimit), ''];
  const inTurn =
    r.interleaved === undefined
      ? []
      : ['#### Tokens in turn, as in-flight batching sends them', '', interleavedMarkdown(r.interleaved), ''];
  const side =
    r.sideBySide === undefined || r.sideBySide.rows.length === 0
      ? []
      : ['#### Side by side: pairs measured in alternation', '', sideBySideMarkdown(r.sideBySide), ''];
  const cold =
    r.coldStart === undefined || r.coldStart.rows.length === 0
      ? []
      : ['#### Cold start: process start to first token', '', coldStartMarkdown(r.coldStart), ''];
  return [
    START,
    machine,
    '',
    '#### Throughput and client CPU',
    '',
    'Client CPU per token in µs (user + system of the client process, all threads) and tokens/s, at each number ' +
      'of concurrent streams' +
      (warmups ? '; the warm-up columns are the CPU per token a freshly started process paid:' : ':'),
    '',
    throughput,
    '',
    '#### Client memory with idle streams',
    '',
    `Growth per idle stream after a full GC, in KB: RSS${youngLeftOut ? ' (young generation left out)' : ''} and ` +
      `JS heap + external${repeated ? ' (medians)' : ''}, at each number of idle streams:`,
    '',
    memory,
    '',
    ...cold,
    ...side,
    ...inTurn,
    ...limit,
    '#### Targets',
    '',
    targets + failures,
    END,
  ].join('\n');
}

/** The cold-start table: medians of fresh processes, each run's time, and the ratio to Python's. */
export function coldStartMarkdown(c: ColdStartResults): string {
  const python = c.rows.some((row) => row.ratioToPython !== undefined);
  const rows = table(
    [
      'client',
      'first token (ms), median',
      'each run (ms)',
      'CPU to first token (ms), median',
      ...(python ? ["vs Python's"] : []),
    ],
    c.rows.map((row) => [
      row.label,
      n0(row.firstTokenMs),
      row.firstTokenMsRuns.map(n0).join(', '),
      n0(row.cpuMs),
      ...(python ? [row.ratioToPython === undefined ? '' : `${row.ratioToPython.toFixed(2)}x`] : []),
    ]),
  );
  return [
    `A user's first script, run ${c.runs} times per client as a fresh process (plain \`node\` or \`python\`, the ` +
      'built packages linked into a project of its own, clients in turn): from the spawn to the line it prints at ' +
      `its first token, one request of \`max_tokens\` ${c.maxTokens} to \`ensemble\` on an idle fake. The CPU column ` +
      "is the child's own (every thread) up to that token. `BENCH_COLD_ONLY=1 pnpm bench:overhead` runs only this part.",
    '',
    rows,
  ].join('\n');
}

/** What a shared-call run is read against: the same client with a call per request. */
const CALL_PER_REQUEST: Partial<Record<string, string>> = {
  'sdk-grpc-mux': 'sdk-grpc',
  'socket-probe-mux': 'socket-probe',
};

/** The side-by-side pairs: one row per pair, the ratio and the rounds' quartiles at each level. */
export function sideBySideMarkdown(s: SideBySideResults): string {
  const { levels, rows: pairs } = byClient(s.rows, (r) => r.concurrency);
  const rows = table(
    ['pair', ...levels.map((l) => `CPU per token at ${n0(l)} (95 % interval; µs per token)`)],
    pairs.map(([label, row]) => [
      label,
      ...levels.map((l) =>
        cellAt(
          row,
          l,
          (r) =>
            `${r.ratio.toFixed(3)}x (${r.interval[0].toFixed(2)}-${r.interval[1].toFixed(2)}; ` +
            `${n2(r.cpuUsPerToken)} / ${n2(r.referenceCpuUsPerToken)})`,
        ),
      ),
    ]),
  );
  return [
    'Each client below runs as a live process, warmed up before its turns; the processes take turns, a slice of ' +
      `about ${n0(s.sliceTokens)} tokens each (at least two requests per stream), in an order that rotates every ` +
      'round, so load from elsewhere on the machine falls on both sides of a pair alike. ' +
      (s.processes > 1
        ? `At each level the set of processes starts afresh ${s.processes} times, ${n0(s.rounds / s.processes)} ` +
          `rounds each (${s.rounds} in all), since a process keeps a bias of its own. A ratio is the geometric ` +
          "mean of the generations' ratios (each that of its rounds, two slices run next to each other), with its " +
          '95 % interval from their spread'
        : `One process per client ran all ${s.rounds} rounds. A ratio is the geometric mean of the rounds' ` +
          'ratios (two slices run next to each other), with its 95 % interval from their spread, which leaves a ' +
          "process's own bias out") +
      '; the control pair runs one client in two processes, so its distance from 1 is what the method itself ' +
      'can tell apart:',
    '',
    rows,
  ].join('\n');
}

function interleavedMarkdown(i: InterleavedResults): string {
  const { levels, rows: clients } = byClient(i.throughput, (t) => t.concurrency);
  const ratio = (t: ThroughputRow) => {
    const base = i.throughput.find(
      (b) => b.variant === CALL_PER_REQUEST[t.variant] && b.concurrency === t.concurrency,
    );
    return base === undefined ? '' : `${(t.cpuUsPerToken / base.cpuUsPerToken).toFixed(2)}x`;
  };
  const rows = table(
    [
      'client',
      ...levels.map((l) => `µs/token at ${n0(l)}`),
      ...levels.map((l) => `tokens/s at ${n0(l)}`),
      ...levels.map((l) => `vs a call per request at ${n0(l)}`),
    ],
    clients.map(([label, row]) => [
      label,
      ...levels.map((l) => cellAt(row, l, (t) => n2(t.cpuUsPerToken))),
      ...levels.map((l) => cellAt(row, l, (t) => n0(t.tokensPerSec))),
      ...levels.map((l) => cellAt(row, l, ratio)),
    ]),
  );
  return [
    `The gRPC clients again, on a fake that sends ${i.tokensPerTurn === 1 ? 'one token' : `${i.tokensPerTurn} tokens`} of each ` +
      "generation in turn (`tokensPerTurn`) instead of up to 64 back to back, as a GPU's in-flight batching yields " +
      "one token of every request per iteration. The main runs' fake sends a short answer whole, so a client with a " +
      'call per request reads its tokens in a row while their state is warm; a server that batches gives no client that' +
      (i.tokens === undefined
        ? ':'
        : `. Each run here measures ${n0(i.tokens)} tokens after ${n0(i.nodeWarmup ?? 0)} unmeasured requests, ` +
          "a longer window than the main runs', so that both paths are compiled when it starts:"),
    '',
    rows,
  ].join('\n');
}

function streamLimitMarkdown(l: StreamLimitResults): string {
  const groups = [...byVariant(l.throughput)];
  // One client run (results written before the young-generation run) has no client names.
  const named = groups.length > 1;
  const levels = [...new Set(l.throughput.map((t) => t.concurrency))];
  const lowest = levels[0];
  const highest = levels[levels.length - 1];
  const rows = table(
    [
      'client',
      ...levels.map((level) => `µs/token at ${n0(level)}`),
      `at ${highest === undefined ? '-' : n0(highest)} / at ${lowest === undefined ? '-' : n0(lowest)}`,
    ],
    groups.map(([variant, runs]) => {
      const first = runs[0]!;
      const last = runs[runs.length - 1]!;
      return [
        named ? streamLimitLabel(variant, l) : first.label,
        ...levels.map((level) => {
          const t = runs.find((x) => x.concurrency === level);
          return t === undefined ? '-' : n2(t.cpuUsPerToken);
        }),
        `${(last.cpuUsPerToken / first.cpuUsPerToken).toFixed(2)}x`,
      ];
    }),
  );
  const idle = l.memory.map(
    (m) =>
      `${rssKb(m)} KB of RSS and ${kb(m.heapBytesPerStream)} KB of JS heap + external per stream at ${n0(m.streams)} idle streams`,
  );
  return [
    `\`TritonLlm\` over gRPC against a fake that allows ${l.maxStreams} concurrent streams per HTTP/2 connection ` +
      `(\`grpcMaxConcurrentStreams\`), the transport allowed ${l.maxConnections} connections (\`maxConnections\`)` +
      (groups.some(([variant]) => variant === 'socket-probe')
        ? `, and the socket probe opening a connection per ${l.maxStreams} streams as well:`
        : ':'),
    '',
    rows,
    ...(idle.length === 0 ? [] : ['', `Memory: ${idle.join('; ')}.`]),
  ].join('\n');
}

/** Replaces the generated block of `path` (or appends one), keeping the hand-written text around it. */
export function writeResultsMarkdown(path: string, r: OverheadResults): Promise<void> {
  return writeGeneratedBlock(path, { start: START, end: END }, resultsMarkdown(r), {
    missing: '# Performance\n\n',
  });
}

const SUMMARY_START =
  '<!-- overhead-summary:start (written by pnpm bench:overhead; edits inside are lost) -->';
const SUMMARY_END = '<!-- overhead-summary:end -->';

/**
 * The README's short form of the same results: per level, the default `TritonLlm` over gRPC and
 * over HTTP against the fastest bare client, perf_analyzer and Python tritonclient.
 */
export function summaryMarkdown(r: OverheadResults): string {
  const row = (variant: string, level: number) =>
    r.throughput.find((t) => t.variant === variant && t.concurrency === level);
  const levels = [...new Set(r.throughput.map((t) => t.concurrency))];
  const cell = (variant: string, level: number) => {
    const t = row(variant, level);
    return t === undefined ? 'n/a' : `${n2(t.cpuUsPerToken)} µs · ${n0(t.tokensPerSec)} tok/s`;
  };
  const fastestBare = (level: number) => {
    const bare = r.throughput.filter((t) => t.concurrency === level && t.ratioToFastestBare === 1);
    return bare[0];
  };
  const perf = table(
    [
      'streams',
      'TritonLlm gRPC (default)',
      'vs fastest bare',
      'TritonLlm HTTP SSE',
      'fastest bare client',
      'perf_analyzer (C++)',
      'Python tritonclient',
    ],
    levels.map((level) => {
      const sdk = row('sdk-grpc', level);
      const bare = fastestBare(level);
      return [
        n0(level),
        cell('sdk-grpc', level),
        sdk?.ratioToFastestBare === undefined ? 'n/a' : `${(sdk.ratioToFastestBare * 100).toFixed(0)} %`,
        cell('sdk-http', level),
        bare === undefined ? 'n/a' : `${cell(bare.variant, level)} (${bare.label.replace(/^bare /, '')})`,
        cell('perf-analyzer', level),
        cell('python-tritonclient', level),
      ];
    }),
  );
  const idle = r.memory
    .filter((m) => m.variant === 'sdk-grpc')
    .map((m) => `${kb(m.rssBytesPerStream)} KB at ${n0(m.streams)}`)
    .join(', ');
  const probeFigures = (variant: string): string =>
    levels
      .map((level) => row(variant, level))
      .filter((t) => t !== undefined)
      .map((t) => `${n2(t.cpuUsPerToken)} µs at ${n0(t.concurrency)}`)
      .join(', ');
  const probe = probeFigures('socket-probe');
  const httpProbe = probeFigures('http-probe');
  // "x µs at n, ..." for one variant's rows of a part of the run.
  const figures = (rows: readonly ThroughputRow[] | undefined, variant: string): string | undefined =>
    rows
      ?.filter((t) => t.variant === variant)
      .map((t) => `${n2(t.cpuUsPerToken)} µs at ${n0(t.concurrency)}`)
      .join(', ');
  const inTurnFigures = (variant: string) => figures(r.interleaved?.throughput, variant);
  const limitedFigures = (variant: string) => figures(r.streamLimit?.throughput, variant);
  const inTurnDefault = inTurnFigures('sdk-grpc');
  const inTurnMux = inTurnFigures('sdk-grpc-mux');
  const limited = limitedFigures('sdk-grpc');
  const young = limitedFigures('sdk-grpc-young');
  const limitedProbe = limitedFigures('socket-probe');
  const missed = r.targets.filter((t) => !t.met);
  return [
    SUMMARY_START,
    `Client CPU per token and tokens/s, measured ${r.machine.date.slice(0, 10)} on Node ${r.machine.node} by \`pnpm bench:overhead\` ` +
      `(fake Triton at full speed, one token per response, medians of ${r.config.repeats} runs; ` +
      'details, memory and the known limits: [docs/PERFORMANCE.md](docs/PERFORMANCE.md)):',
    '',
    perf,
    '',
    ...(probe === ''
      ? []
      : [
          `Below node:http2: a probe that reads HTTP/2 frames in JavaScript from a plain socket (not a client; see docs/PERFORMANCE.md) needs ${probe} per token.`,
          '',
        ]),
    ...(httpProbe === ''
      ? []
      : [
          `The same for HTTP/1.1: a probe that reads \`generate_stream\` events from plain sockets, one connection per stream, needs ${httpProbe} per token.`,
          '',
        ]),
    ...(limited === undefined || limited === ''
      ? []
      : [
          `Against a server that allows ${r.streamLimit?.maxStreams} streams per connection (the transport opens more connections past it): ${limited} streams` +
            (young === undefined || young === ''
              ? ''
              : `; with \`${semiSpaceFlag(r.streamLimit ?? {})}\` (see docs/PERFORMANCE.md): ${young}`) +
            (limitedProbe === undefined || limitedProbe === ''
              ? '.'
              : `; the socket probe on as many connections: ${limitedProbe}.`),
          '',
        ]),
    ...(inTurnDefault === undefined || inTurnDefault === '' || inTurnMux === undefined || inTurnMux === ''
      ? []
      : [
          `With one token of each request in turn, as in-flight batching sends them: the default path ${inTurnDefault} streams, \`multiplex: true\` ${inTurnMux}.`,
          '',
        ]),
    `RSS per idle gRPC stream: ${idle === '' ? 'not measured' : idle}. ` +
      (missed.length === 0
        ? 'Every target of the benchmark is met.'
        : `Targets missed: ${missed.map((t) => `${t.target} at ${n0(t.level)}`).join('; ')} (see docs/PERFORMANCE.md).`),
    SUMMARY_END,
  ].join('\n');
}

/** Replaces the README's summary block (or appends one). */
export function writeSummaryMarkdown(path: string, r: OverheadResults): Promise<void> {
  return writeGeneratedBlock(path, { start: SUMMARY_START, end: SUMMARY_END }, summaryMarkdown(r));
}
