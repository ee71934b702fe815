/**
 * perf_analyzer (C++), the way genai-perf drives it for a TensorRT-LLM model over gRPC: `--async
 * --streaming`, a fixed `--request-count` after `--warmup-request-count`, at one concurrency.
 *
 * It reports request latency (send to the last non-null response) percentiles, requests/s and
 * responses/s itself (its CSV). It has no notion of tokens: on these models every streamed
 * response carries one token, so responses/s is its output token throughput. Time to first token
 * and inter-token latency are computed here from the response timestamps of its own profile export.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../command.js';
import { percentiles } from '../figures.js';
import { defined, itl, readProfileExport, spanMs, ttft } from '../profile-export.js';
import type { LevelJob, ToolContext, ToolResult } from './tool.js';

/** Arguments shared with the overhead benchmark's perf_analyzer variant. */
export function perfAnalyzerArgs(options: {
  readonly grpcAddress: string;
  readonly model: string;
  readonly inputData: string;
  readonly concurrency: number;
  readonly requests: number;
  readonly warmup: number;
  readonly exportFile: string;
  readonly csvFile?: string;
}): string[] {
  return [
    ...['-u', options.grpcAddress, '-i', 'grpc', '-m', options.model, '--async', '--streaming'],
    ...['--input-data', options.inputData, '--shape', 'max_tokens:1', '--shape', 'text_input:1'],
    ...['--concurrency-range', String(options.concurrency)],
    ...['--request-count', String(options.requests), '--warmup-request-count', String(options.warmup)],
    ...['--profile-export-file', options.exportFile],
    ...(options.csvFile !== undefined ? ['-f', options.csvFile] : []),
  ];
}

function csvRow(csv: string): Record<string, number> {
  const [head, row] = csv.trim().split('\n');
  if (head === undefined || row === undefined)
    throw new Error(`perf_analyzer CSV without a result row: ${csv}`);
  const names = head.split(',');
  const values = row.split(',').map(Number);
  return Object.fromEntries(names.map((n, i) => [n, values[i] ?? Number.NaN]));
}

export async function runPerfAnalyzer(ctx: ToolContext, job: LevelJob): Promise<ToolResult> {
  if ('skipped' in ctx.peers.perfAnalyzer) throw new Error(ctx.peers.perfAnalyzer.skipped);
  const exportFile = join(ctx.workDir, `perf_analyzer-c${job.concurrency}.json`);
  const csvFile = join(ctx.workDir, `perf_analyzer-c${job.concurrency}.csv`);
  // perf_analyzer 2.50 has once left its profile export cut at 128 KiB while exiting with 0 (on
  // the real Triton at concurrency 1): a run whose export does not parse is made once more.
  let own: Record<string, number> = {};
  let timings: Awaited<ReturnType<typeof readProfileExport>> | undefined;
  for (let attempt = 1; timings === undefined; attempt++) {
    await runCommand(['rm', '-f', exportFile, csvFile], { timeoutMs: 10_000 });
    await runCommand(
      [
        ctx.peers.perfAnalyzer.path,
        ...perfAnalyzerArgs({
          grpcAddress: ctx.grpcAddress,
          model: ctx.model,
          inputData: ctx.files.perfAnalyzerJson,
          ...job,
          exportFile,
          csvFile,
        }),
      ],
      { env: ctx.peers.env, timeoutMs: 600_000 },
    );
    own = csvRow(await readFile(csvFile, 'utf8'));
    try {
      timings = await readProfileExport(exportFile);
    } catch (err) {
      if (attempt >= 2 || !(err instanceof SyntaxError)) throw err;
      process.stderr.write(
        `perf_analyzer left an unreadable profile export (${err.message}); running it again\n`,
      );
    }
  }
  const tokens = timings.reduce((n, r) => n + r.tokenMs.length, 0);
  const requestThroughput = own['Inferences/Second'] ?? Number.NaN;
  return {
    figures: {
      tool: 'perf_analyzer',
      server: ctx.server,
      concurrency: job.concurrency,
      requests: timings.length,
      ttftMs: percentiles(defined(timings.map(ttft))),
      itlMs: percentiles(defined(timings.map(itl))),
      // Its percentiles are nearest-rank (index p/100 * (n - 1) + 0.5, rounded down), in µs.
      e2eMs: {
        p50: (own['p50 latency'] ?? Number.NaN) / 1000,
        p99: (own['p99 latency'] ?? Number.NaN) / 1000,
      },
      requestThroughput,
      outputTokenThroughput: own['Response Throughput'] ?? Number.NaN,
      outputTokensPerRequest: tokens / timings.length,
      derived: ['TTFT p50', 'TTFT p99', 'ITL p50', 'ITL p99'],
      tokenCounting: 'none; one per non-null streamed response (responses/s)',
      spanS: spanMs(timings) / 1000,
    },
  };
}
