import Table from 'cli-table3';
import type { BenchReport, LevelReport } from './report.js';
import type { LatencyStats } from './stats.js';

type Row = readonly [label: string, read: (l: LevelReport) => string];

const ms = (v: number | undefined) => (v === undefined ? 'n/a' : v.toFixed(2));
const rate = (v: number | undefined) => (v === undefined ? 'n/a' : v.toFixed(1));
const share = (v: number | undefined) => (v === undefined ? 'n/a' : `${(v * 100).toFixed(1)} %`);

function latencyRows(name: string, read: (l: LevelReport) => LatencyStats | undefined): Row[] {
  return (['mean', 'p50', 'p90', 'p99'] as const).map((k) => [`${name} ${k} (ms)`, (l) => ms(read(l)?.[k])]);
}

const ROWS: readonly Row[] = [
  ['requests ok / sent', (l) => `${l.completed} / ${l.requests}`],
  ['errors', (l) => String(l.errors)],
  ['duration (s)', (l) => l.durationS.toFixed(2)],
  ...latencyRows('TTFT', (l) => l.ttftMs),
  ...latencyRows('inter-token', (l) => l.itlMs),
  ...latencyRows('end-to-end', (l) => l.e2eMs),
  ['requests/s', (l) => l.requestThroughput.toFixed(2)],
  ['input tokens/s', (l) => rate(l.inputTokenThroughput)],
  ['output tokens/s', (l) => rate(l.outputTokenThroughput)],
];

const ACCURACY_ROWS: readonly Row[] = [
  ['exact match', (l) => share(l.accuracy?.exactMatch)],
  ['ROUGE-L F1', (l) => (l.accuracy === undefined ? 'n/a' : l.accuracy.rougeL.toFixed(3))],
];

/**
 * The end-of-run table: one column per concurrency level, one row per metric (levels as columns
 * keep the table narrow however many metrics there are), then the distinct errors of each level.
 */
export function renderTable(report: BenchReport): string {
  const table = new Table({
    head: ['concurrency', ...report.levels.map((l) => String(l.concurrency))],
    colAligns: ['left', ...report.levels.map(() => 'right' as const)],
    style: { head: [], border: [], compact: true },
  });
  const rows = report.levels.some((l) => l.accuracy !== undefined) ? [...ROWS, ...ACCURACY_ROWS] : ROWS;
  for (const [label, read] of rows) table.push([label, ...report.levels.map(read)]);
  const title =
    `${report.model} over ${report.protocol} at ${report.url}, ${report.streaming ? 'streaming' : 'not streaming'}, ` +
    `max ${report.maxTokens} tokens, tokens counted by the ${report.tokenSource}`;
  const errors = report.levels.flatMap((l) =>
    l.errorKinds.map((e) => `  concurrency ${l.concurrency}: ${e.count} x ${e.code}: ${e.message}`),
  );
  return [title, table.toString(), ...(errors.length > 0 ? ['errors:', ...errors] : [])].join('\n');
}
