/** Ours: the built `trtllm-bench` CLI, one invocation per level, read back from its JSON export. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../command.js';
import type { Percentiles } from '../figures.js';
import type { LevelJob, ToolContext, ToolResult } from './tool.js';

interface Stats {
  readonly p50: number;
  readonly p99: number;
}
interface BenchLevel {
  readonly completed: number;
  readonly errors: number;
  readonly ttftMs?: Stats;
  readonly itlMs?: Stats;
  readonly e2eMs?: Stats;
  readonly requestThroughput: number;
  readonly outputTokens: number;
  readonly outputTokenThroughput: number;
  readonly errorKinds: readonly { readonly message: string }[];
}

const pick = (s: Stats | undefined): Percentiles | undefined =>
  s === undefined ? undefined : { p50: s.p50, p99: s.p99 };

export function benchCli(root: string): string {
  return join(root, 'packages', 'bench', 'dist', 'cli.js');
}

export async function runTrtllmBench(ctx: ToolContext, job: LevelJob): Promise<ToolResult> {
  const out = join(ctx.workDir, `trtllm-bench-c${job.concurrency}.json`);
  await runCommand(
    [
      process.execPath,
      benchCli(ctx.root),
      ...['-u', ctx.grpcAddress, '-i', 'grpc', '-m', ctx.model],
      ...['--concurrency', String(job.concurrency), '--input-data', ctx.files.benchJsonl],
      ...['--streaming', '--max-tokens', String(ctx.maxTokens)],
      ...['--warmup', String(job.warmup), '--num-requests', String(job.requests)],
      ...['--export', out, '--no-chart', '--no-progress'],
    ],
    { timeoutMs: 600_000 },
  );
  const report = JSON.parse(await readFile(out, 'utf8')) as { levels: BenchLevel[] };
  const level = report.levels[0];
  if (level === undefined || level.e2eMs === undefined) throw new Error(`${out}: no measured level`);
  if (level.errors > 0) {
    throw new Error(`trtllm-bench: ${level.errors} requests failed: ${level.errorKinds[0]?.message ?? ''}`);
  }
  const ttftMs = pick(level.ttftMs);
  const itlMs = pick(level.itlMs);
  return {
    figures: {
      tool: 'trtllm-bench',
      server: ctx.server,
      concurrency: job.concurrency,
      requests: level.completed,
      ...(ttftMs !== undefined ? { ttftMs } : {}),
      ...(itlMs !== undefined ? { itlMs } : {}),
      e2eMs: { p50: level.e2eMs.p50, p99: level.e2eMs.p99 },
      requestThroughput: level.requestThroughput,
      outputTokenThroughput: level.outputTokenThroughput,
      outputTokensPerRequest: level.outputTokens / level.completed,
      tokenCounting: 'one per streamed response with text: the tokens the server generated',
    },
  };
}
