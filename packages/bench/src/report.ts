import type { ErrorCode, Tokenizer } from '@trtllm/sdk';
import { type AccuracyReport, scoreAccuracy } from './accuracy.js';
import type { PromptRecord } from './dataset.js';
import type { RequestSample } from './request-sample.js';
import { type LatencyStats, latencyStats } from './stats.js';

/** Where token counts come from: the `--tokenizer` given, or the ids and counts the server sent. */
export type TokenSource = 'tokenizer' | 'server';

/** Failed requests of one kind. */
export interface ErrorCount {
  readonly code: ErrorCode;
  readonly message: string;
  readonly count: number;
}

/** Everything measured at one concurrency level. Latencies cover successful requests only. */
export interface LevelReport {
  readonly concurrency: number;
  /** Requests per second asked for; absent for a closed loop. */
  readonly requestRate?: number;
  /** Requests sent (warm-up excluded). */
  readonly requests: number;
  readonly completed: number;
  readonly errors: number;
  /** Failures grouped by code and message, most frequent first. */
  readonly errorKinds: readonly ErrorCount[];
  /** Wall-clock seconds from the first request sent to the last one ended. */
  readonly durationS: number;
  /** Time to first token (streaming only). */
  readonly ttftMs?: LatencyStats;
  /** Per-request mean inter-token latency (streaming only). */
  readonly itlMs?: LatencyStats;
  /** End-to-end request latency. */
  readonly e2eMs?: LatencyStats;
  /** Completed requests per second. */
  readonly requestThroughput: number;
  /** Prompt tokens of completed requests; absent when neither a tokenizer nor the server counts them. */
  readonly inputTokens?: number;
  readonly outputTokens: number;
  readonly inputTokenThroughput?: number;
  readonly outputTokenThroughput: number;
  /** Present when some prompts carry an expected output. */
  readonly accuracy?: AccuracyReport;
}

/** A whole run: what was measured against what, and one report per concurrency level. */
export interface BenchReport {
  readonly url: string;
  readonly protocol: 'grpc' | 'http';
  readonly model: string;
  readonly streaming: boolean;
  readonly maxTokens: number;
  readonly tokenSource: TokenSource;
  readonly prompts: number;
  /** ISO 8601 time the run started. */
  readonly startedAt: string;
  readonly levels: readonly LevelReport[];
}

/** What {@link summarizeLevel} needs besides the samples. */
export interface LevelContext {
  readonly concurrency: number;
  readonly requestRate?: number;
  readonly durationMs: number;
  readonly prompts: readonly PromptRecord[];
  readonly tokenizer?: Tokenizer;
}

/** Turns the samples of one level into its report. */
export function summarizeLevel(samples: readonly RequestSample[], context: LevelContext): LevelReport {
  const ok = samples.filter((s) => s.error === undefined);
  const failed = samples.filter((s) => s.error !== undefined);
  const durationS = context.durationMs / 1000;
  const perSecond = (n: number) => (durationS > 0 ? n / durationS : 0);
  const { inputTokens, outputTokens } = countTokens(ok, context);
  const ttftMs = latencyStats(defined(ok.map((s) => s.ttftMs)));
  const itlMs = latencyStats(defined(ok.map((s) => s.itlMs)));
  const e2eMs = latencyStats(ok.map((s) => s.e2eMs));
  const accuracy = scoreAccuracy(
    ok.flatMap((s) => {
      const expected = context.prompts[s.promptIndex]?.output;
      return expected === undefined ? [] : [{ output: s.text, expected }];
    }),
  );
  return {
    concurrency: context.concurrency,
    ...(context.requestRate !== undefined ? { requestRate: context.requestRate } : {}),
    requests: samples.length,
    completed: ok.length,
    errors: failed.length,
    errorKinds: groupErrors(failed),
    durationS,
    ...(ttftMs !== undefined ? { ttftMs } : {}),
    ...(itlMs !== undefined ? { itlMs } : {}),
    ...(e2eMs !== undefined ? { e2eMs } : {}),
    requestThroughput: perSecond(ok.length),
    ...(inputTokens !== undefined ? { inputTokens, inputTokenThroughput: perSecond(inputTokens) } : {}),
    outputTokens,
    outputTokenThroughput: perSecond(outputTokens),
    ...(accuracy !== undefined ? { accuracy } : {}),
  };
}

function countTokens(
  ok: readonly RequestSample[],
  context: LevelContext,
): { inputTokens: number | undefined; outputTokens: number } {
  const { tokenizer, prompts } = context;
  if (tokenizer !== undefined) {
    const promptTokens = new Map<number, number>();
    let inputTokens = 0;
    let outputTokens = 0;
    for (const s of ok) {
      let n = promptTokens.get(s.promptIndex);
      if (n === undefined) {
        n = tokenizer.encode(prompts[s.promptIndex]?.input ?? '').length;
        promptTokens.set(s.promptIndex, n);
      }
      inputTokens += n;
      outputTokens += tokenizer.encode(s.text).length;
    }
    return { inputTokens, outputTokens };
  }
  // A total over only the requests that reported a count would understate throughput: all or nothing.
  const inputs = defined(ok.map((s) => s.serverInputTokens));
  return {
    inputTokens: inputs.length === ok.length && ok.length > 0 ? sum(inputs) : undefined,
    outputTokens: sum(defined(ok.map((s) => s.serverOutputTokens))),
  };
}

function groupErrors(failed: readonly RequestSample[]): ErrorCount[] {
  const groups = new Map<string, { code: ErrorCode; message: string; count: number }>();
  for (const s of failed) {
    if (s.error === undefined) continue;
    const key = `${s.error.code}\u0000${s.error.message}`;
    const group = groups.get(key) ?? { code: s.error.code, message: s.error.message, count: 0 };
    group.count += 1;
    groups.set(key, group);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

function defined(values: readonly (number | undefined)[]): number[] {
  return values.filter((v): v is number => v !== undefined);
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}
