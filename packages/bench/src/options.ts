import type { Tokenizer } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import type { PromptRecord } from './dataset.js';

/** What {@link runBenchmark} measures. */
export interface BenchOptions {
  /**
   * The server's address, read by `transportFromUrl` of `@trtllm/connect`: the gRPC endpoint
   * (`grpc://host:8001`, `http://host:8001`, `dns:host:8001`) or the HTTP one (`http://host:8000`).
   */
  readonly url: string;
  /** The protocol of an `http(s)://` address; `grpc://` and `dns:` addresses are gRPC and refuse `http`. */
  readonly protocol: 'grpc' | 'http';
  /** Model to call: `ensemble`, `tensorrt_llm_bls`, `tensorrt_llm` (needs `tokenizer`), ... */
  readonly model: string;
  /** Prompts, used round-robin. */
  readonly prompts: readonly PromptRecord[];
  /** One level per entry, run in order. */
  readonly concurrency: readonly number[];
  /** Requests measured per level. Default: 100, or 4 per slot when that is more. */
  readonly numRequests?: number;
  /** Requests per second (open loop, capped by the concurrency); absent: closed loop. */
  readonly requestRate?: number;
  /** Requests sent before each level's measurement and left out of it. Default 0. */
  readonly warmup?: number;
  /** Stream tokens (TTFT and inter-token latency are measured only then). Default false. */
  readonly streaming?: boolean;
  /** `maxTokens` of every request. Default 128. */
  readonly maxTokens?: number;
  /** Counts tokens (and drives the raw `tensorrt_llm` model); without it the server's counts are used. */
  readonly tokenizer?: Tokenizer;
}

export const DEFAULT_MAX_TOKENS = 128;

/** Requests measured at a level when the caller does not say. */
export function defaultRequests(concurrency: number): number {
  return Math.max(100, 4 * concurrency);
}

/** Refuses options that cannot give a meaningful run, naming the option and its value. */
export function validateBenchOptions(options: BenchOptions): void {
  if (options.protocol !== 'grpc' && options.protocol !== 'http') {
    throw invalidArgument('protocol', options.protocol, "must be 'grpc' or 'http'");
  }
  if (typeof options.model !== 'string' || options.model.length === 0) {
    throw invalidArgument('model', options.model, 'must be a model name');
  }
  if (!Array.isArray(options.prompts) || options.prompts.length === 0) {
    throw invalidArgument('prompts', options.prompts, 'needs at least one prompt');
  }
  if (!Array.isArray(options.concurrency) || options.concurrency.length === 0) {
    throw invalidArgument('concurrency', options.concurrency, 'needs at least one level');
  }
  for (const c of options.concurrency) positiveInteger('concurrency', c);
  if (options.numRequests !== undefined) positiveInteger('numRequests', options.numRequests);
  if (options.maxTokens !== undefined) positiveInteger('maxTokens', options.maxTokens);
  if (options.warmup !== undefined && !(Number.isSafeInteger(options.warmup) && options.warmup >= 0)) {
    throw invalidArgument('warmup', options.warmup, 'must be a whole number >= 0');
  }
  if (
    options.requestRate !== undefined &&
    !(Number.isFinite(options.requestRate) && options.requestRate > 0)
  ) {
    throw invalidArgument('requestRate', options.requestRate, 'must be a number of requests per second > 0');
  }
}

function positiveInteger(field: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1)
    throw invalidArgument(field, value, 'must be a whole number >= 1');
}
