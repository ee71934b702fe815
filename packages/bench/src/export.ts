import { writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { invalidArgument } from '@trtllm/sdk/transport';
import type { BenchReport, LevelReport } from './report.js';
import type { LatencyStats } from './stats.js';

/** The whole report as pretty-printed JSON (absent metrics are left out, never written as 0). */
export function toJson(report: BenchReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

const STAT_KEYS = ['mean', 'p50', 'p90', 'p99'] as const;
const LATENCIES = [
  ['ttft_ms', (l: LevelReport) => l.ttftMs],
  ['itl_ms', (l: LevelReport) => l.itlMs],
  ['e2e_ms', (l: LevelReport) => l.e2eMs],
] as const;

type Cell = string | number | boolean | undefined;

/** Columns of the CSV export, in order, with how each is read from a level of a run. */
const COLUMNS: readonly (readonly [string, (l: LevelReport, r: BenchReport) => Cell])[] = [
  ['model', (_l, r) => r.model],
  ['protocol', (_l, r) => r.protocol],
  ['streaming', (_l, r) => r.streaming],
  ['max_tokens', (_l, r) => r.maxTokens],
  ['token_source', (_l, r) => r.tokenSource],
  ['concurrency', (l) => l.concurrency],
  ['request_rate', (l) => l.requestRate],
  ['requests', (l) => l.requests],
  ['completed', (l) => l.completed],
  ['errors', (l) => l.errors],
  ['duration_s', (l) => l.durationS],
  ...LATENCIES.flatMap(([name, read]) =>
    STAT_KEYS.map(
      (k) => [`${name}_${k}`, (l: LevelReport) => (read(l) as LatencyStats | undefined)?.[k]] as const,
    ),
  ),
  ['request_throughput', (l) => l.requestThroughput],
  ['input_tokens', (l) => l.inputTokens],
  ['output_tokens', (l) => l.outputTokens],
  ['input_token_throughput', (l) => l.inputTokenThroughput],
  ['output_token_throughput', (l) => l.outputTokenThroughput],
  ['accuracy_scored', (l) => l.accuracy?.scored],
  ['exact_match', (l) => l.accuracy?.exactMatch],
  ['rouge_l', (l) => l.accuracy?.rougeL],
];

/** One header row and one row per level (RFC 4180 quoting; an absent metric is an empty cell). */
export function toCsv(report: BenchReport): string {
  const rows = [COLUMNS.map(([name]) => name)];
  for (const level of report.levels) rows.push(COLUMNS.map(([, read]) => cell(read(level, report))));
  return `${rows.map((r) => r.join(',')).join('\r\n')}\r\n`;
}

/** Writes the report as JSON or CSV, chosen by the file's extension (`.json` or `.csv`). */
export async function writeReport(path: string, report: BenchReport): Promise<void> {
  const ext = extname(path).toLowerCase();
  if (ext !== '.json' && ext !== '.csv') throw invalidArgument('export', path, 'must end in .json or .csv');
  await writeFile(path, ext === '.json' ? toJson(report) : toCsv(report), 'utf8');
}

function cell(value: Cell): string {
  if (value === undefined) return '';
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}
