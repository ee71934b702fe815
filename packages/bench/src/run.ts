import { performance } from 'node:perf_hooks';
import { transportFromUrl } from '@trtllm/connect';
import { type Transport, TritonLlm } from '@trtllm/sdk';
import { driveLoad } from './load.js';
import { type BenchOptions, DEFAULT_MAX_TOKENS, defaultRequests, validateBenchOptions } from './options.js';
import { type BenchReport, type LevelReport, summarizeLevel } from './report.js';
import { type RequestSample, sampleRequest } from './request-sample.js';

/** Progress callbacks of {@link runBenchmark} (the CLI draws its progress bar from them). */
export interface BenchHooks {
  /** A level starts its measured requests (after its warm-up). */
  readonly onLevelStart?: (level: { readonly concurrency: number; readonly requests: number }) => void;
  /** A measured request ended, successfully or not (warm-up requests are not reported). */
  readonly onRequestEnd?: (sample: RequestSample) => void;
  /** A level finished; its report is final and is also part of the run's report. */
  readonly onLevelEnd?: (report: LevelReport) => void;
}

/**
 * Runs the benchmark: for each concurrency level, optional warm-up requests, then the measured
 * requests, each timed by the bench's own clock. The model's schema is read first, so a wrong URL,
 * protocol or model fails the run at once instead of as N failed requests. Failures of single
 * requests are counted in the level's report.
 */
export async function runBenchmark(options: BenchOptions, hooks: BenchHooks = {}): Promise<BenchReport> {
  validateBenchOptions(options);
  const startedAt = new Date().toISOString();
  // The default gRPC path is one ModelStreamInfer call per request: its time to first token is the
  // shared call's, at a fraction of its client CPU per token (docs/PERFORMANCE.md), so the bench's
  // own client takes less of a shared machine from the server it measures.
  const transport: Transport = transportFromUrl(options.url, { protocol: options.protocol, field: 'url' });
  const llm = new TritonLlm({
    transport,
    model: options.model,
    ...(options.tokenizer !== undefined ? { tokenizer: options.tokenizer } : {}),
  });
  try {
    await llm.schema();
    const streaming = options.streaming ?? false;
    const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    const { prompts } = options;
    let sent = 0;
    const send = (record: (s: RequestSample) => void) => async () => {
      // Prompts rotate over the whole run, so every level sees the same mix.
      const promptIndex = sent++ % prompts.length;
      const sample = await sampleRequest(llm, {
        promptIndex,
        prompt: prompts[promptIndex]!.input,
        maxTokens,
        streaming,
      });
      record(sample);
    };
    const levels: LevelReport[] = [];
    for (const concurrency of options.concurrency) {
      const warmup = options.warmup ?? 0;
      if (warmup > 0)
        await driveLoad(
          { concurrency, requests: warmup },
          send(() => undefined),
        );
      const requests = options.numRequests ?? defaultRequests(concurrency);
      hooks.onLevelStart?.({ concurrency, requests });
      const samples: RequestSample[] = [];
      const start = performance.now();
      await driveLoad(
        {
          concurrency,
          requests,
          ...(options.requestRate !== undefined ? { requestRate: options.requestRate } : {}),
        },
        send((s) => {
          samples.push(s);
          hooks.onRequestEnd?.(s);
        }),
      );
      const report = summarizeLevel(samples, {
        concurrency,
        ...(options.requestRate !== undefined ? { requestRate: options.requestRate } : {}),
        durationMs: performance.now() - start,
        prompts,
        ...(options.tokenizer !== undefined ? { tokenizer: options.tokenizer } : {}),
      });
      levels.push(report);
      hooks.onLevelEnd?.(report);
    }
    return {
      url: options.url,
      protocol: options.protocol,
      model: options.model,
      streaming,
      maxTokens,
      tokenSource: options.tokenizer !== undefined ? 'tokenizer' : 'server',
      prompts: prompts.length,
      startedAt,
      levels,
    };
  } finally {
    await llm.close();
  }
}
