/**
 * genai-perf (`profile`, KServe endpoint, TensorRT-LLM backend, streaming), which runs perf_analyzer
 * and computes LLM metrics from its profile export. It counts output tokens by re-tokenizing the
 * streamed text with the tokenizer it is given, never from the server.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../command.js';
import { type LevelFigures, percentiles } from '../figures.js';
import { defined, readProfileExport, spanMs, ttft } from '../profile-export.js';
import type { LevelJob, ToolContext, ToolResult } from './tool.js';

interface Stat {
  readonly avg: number;
  readonly p50?: number;
  readonly p99?: number;
}
interface GenaiPerfExport {
  readonly time_to_first_token: Stat;
  readonly inter_token_latency: Stat;
  readonly request_latency: Stat;
  readonly request_throughput: Stat;
  readonly output_token_throughput: Stat;
  readonly output_sequence_length: Stat;
  readonly request_count: Stat;
}

const p = (s: Stat) => ({ p50: s.p50 ?? Number.NaN, p99: s.p99 ?? Number.NaN });

async function find(dir: string, name: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true });
  const hit = entries.find((e) => e === name || e.endsWith(`/${name}`));
  if (hit === undefined) throw new Error(`genai-perf wrote no ${name} under ${dir}`);
  return join(dir, hit);
}

export async function runGenaiPerf(ctx: ToolContext, job: LevelJob): Promise<ToolResult> {
  if ('skipped' in ctx.peers.genaiPerf) throw new Error(ctx.peers.genaiPerf.skipped);
  const artifacts = join(ctx.workDir, `genai-perf-c${job.concurrency}`);
  await rm(artifacts, { recursive: true, force: true });
  await runCommand(
    [
      ctx.peers.genaiPerf.path,
      'profile',
      ...['-m', ctx.model, '--endpoint-type', 'kserve', '--backend', 'tensorrtllm', '--streaming'],
      ...['-u', ctx.grpcAddress, '--concurrency', String(job.concurrency)],
      ...['--input-file', ctx.files.genaiPerfJsonl, '--output-tokens-mean', String(ctx.maxTokens)],
      ...['--request-count', String(job.requests), '--warmup-request-count', String(job.warmup)],
      ...['--tokenizer', ctx.tokenizerDir, '--artifact-dir', artifacts],
    ],
    // It writes artifacts/ and a log relative to its working directory.
    { env: ctx.peers.env, cwd: ctx.workDir, timeoutMs: 600_000 },
  );
  const own = JSON.parse(
    await readFile(await find(artifacts, 'profile_export_genai_perf.json'), 'utf8'),
  ) as GenaiPerfExport;
  const figures: LevelFigures = {
    tool: 'genai-perf',
    server: ctx.server,
    concurrency: job.concurrency,
    requests: own.request_count.avg,
    ttftMs: p(own.time_to_first_token),
    itlMs: p(own.inter_token_latency),
    e2eMs: p(own.request_latency),
    requestThroughput: own.request_throughput.avg,
    outputTokenThroughput: own.output_token_throughput.avg,
    outputTokensPerRequest: own.output_sequence_length.avg,
    tokenCounting: 're-tokenizes the joined streamed text with --tokenizer (Qwen3 BPE here)',
  };
  // Its own timestamps again, with genai-perf's formulas but one token per streamed response.
  const timings = await readProfileExport(await find(artifacts, 'profile_export.json'));
  const tokens = timings.reduce((n, r) => n + r.tokenMs.length, 0);
  const span = spanMs(timings) / 1000;
  const reconciled: LevelFigures = {
    ...figures,
    ttftMs: percentiles(defined(timings.map(ttft))),
    itlMs: percentiles(
      defined(
        timings.map((r) => {
          const first = ttft(r);
          const n = r.tokenMs.length;
          return first === undefined || n < 2 ? undefined : (r.lastResponseMs - r.sentMs - first) / (n - 1);
        }),
      ),
    ),
    e2eMs: percentiles(timings.map((r) => r.lastResponseMs - r.sentMs)),
    requestThroughput: timings.length / span,
    outputTokenThroughput: tokens / span,
    outputTokensPerRequest: tokens / timings.length,
    derived: [
      'TTFT p50',
      'TTFT p99',
      'ITL p50',
      'ITL p99',
      'E2E p50',
      'E2E p99',
      'requests/s',
      'output tokens/s',
    ],
    tokenCounting: "genai-perf's timestamps and formulas, one token per streamed response with text",
  };
  return { figures, reconciled };
}
