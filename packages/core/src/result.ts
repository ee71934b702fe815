/**
 * Why a sequence ended: `stop` (end id, a stop word or a stop sequence), `length` (max tokens),
 * `stopped` (graceful early stop asked with `stop()`), `cancelled` (AbortSignal or `break`),
 * `error`, or `unknown` where neither the model nor the response tells (an older ensemble answering
 * without token counts).
 */
export type FinishReason = 'stop' | 'length' | 'stopped' | 'cancelled' | 'error' | 'unknown';

/**
 * The truth about ending a request early. On real Triton only the raw `tensorrt_llm` and LLM-API
 * models stop generating when told; cancelling an `ensemble` or `tensorrt_llm_bls` call ends the
 * client's side while the inner request runs on to `max_tokens`.
 */
export interface EarlyStopReport {
  /** What ended it: `abort` (signal), `break` (iteration left early), `stop` (`stop()`), `stop_sequence`, `idle_timeout`, `deadline`. */
  readonly trigger: 'abort' | 'break' | 'stop' | 'stop_sequence' | 'idle_timeout' | 'deadline';
  /** Whether a message was sent to the server (in-band stop, gRPC cancel, HTTP disconnect). */
  readonly serverTold: boolean;
  /**
   * How the early end reached the server, every means used, in order: `in_band_stop` (the model's
   * stop input), `grpc_cancel`, `http_disconnect`, or `none`.
   */
  readonly via: readonly ('in_band_stop' | 'grpc_cancel' | 'http_disconnect' | 'none')[];
  /** Whether the server is known to stop generating for this model flavor and path. */
  readonly serverStopsGenerating: boolean;
}

/** A token at one position of the output with its log prob: the sampled one, or one of the most likely (vLLM's `logprobs`). */
export interface TokenLogProb {
  /** The token's id in the model's vocabulary. */
  readonly tokenId: number;
  /** The token's text, decoded alone by the server. */
  readonly token: string;
  /** Its log probability (natural log) at this position. */
  readonly logProb: number;
  /** 1 for the most likely token at its position. */
  readonly rank: number;
}

/** Logits as a float array with its shape (FP16/BF16 outputs are widened to float32). */
export interface Logits {
  readonly data: Float32Array;
  readonly shape: readonly number[];
}

/**
 * The backend's own metrics (`return_perf_metrics`), where the model returns them. The LLM-API
 * model sends every one as a string (`"1"`) under its own kv-cache names (`kv_cache_reused_block`,
 * `kv_cache_missed_block`, `kv_cache_hit_rate`); they are read into the same fields.
 */
export interface PerfMetrics {
  readonly kvCacheAllocNewBlocks?: number;
  readonly kvCacheReusedBlocks?: number;
  /** LLM-API only: `kv_cache_missed_block`. */
  readonly kvCacheMissedBlocks?: number;
  /** LLM-API only: `kv_cache_hit_rate`, reused over reused plus missed blocks. */
  readonly kvCacheHitRate?: number;
  readonly kvCacheAllocTotalBlocks?: number;
  // Nanosecond timestamps (INT64 on the wire) pass 2^53 within days of their epoch: kept as bigints.
  readonly arrivalTimeNs?: bigint;
  readonly firstScheduledTimeNs?: bigint;
  readonly firstTokenTimeNs?: bigint;
  readonly lastTokenTimeNs?: bigint;
  readonly acceptanceRate?: number;
  readonly totalAcceptedDraftTokens?: number;
  readonly totalDraftTokens?: number;
}

/** Token counts of a request. */
export interface Usage {
  /** Prompt tokens, where known (raw model, or models returning `num_input_tokens`). */
  readonly promptTokens?: number;
  /**
   * Generated tokens over every sequence, where every sequence's count is known: absent when the
   * model returns neither ids nor `num_output_tokens` (an ensemble or BLS answering with text only).
   */
  readonly completionTokens?: number;
}

/**
 * Client-measured timings, in milliseconds from the moment the request was handed to the transport.
 * Responses taken up together (one socket read) share one reading of the clock: their gap is 0.
 */
export interface Timings {
  /** Time to the first generated text or token; undefined if none arrived. */
  readonly timeToFirstTokenMs?: number;
  /** Time between consecutive responses carrying output. */
  readonly interTokenMs: readonly number[];
  readonly totalMs: number;
}

/** One generated sequence: a beam, or one of `numReturnSequences`. */
export interface SequenceResult {
  readonly index: number;
  readonly text: string;
  /** Generated token ids where the model returns ids (raw model), else empty. */
  readonly tokenIds: readonly number[];
  /**
   * Generated tokens of this sequence: the ids (raw model), the server's `num_output_tokens`, or one
   * per streamed response; absent where the model tells none of these (never a guessed 0).
   */
  readonly tokenCount?: number;
  readonly finishReason: FinishReason;
  /** The LLM-API model's stop reason (the stop string or id that ended it). */
  readonly stopReason?: string;
  readonly cumLogProb?: number;
  readonly logProbs?: readonly number[];
  /** vLLM: the sampled token of each position, with its text and rank (when log probs were asked for). */
  readonly logProbTokens?: readonly TokenLogProb[];
  /** vLLM: the `topLogProbs` most likely tokens of each position, by rank. */
  readonly topLogProbs?: readonly (readonly TokenLogProb[])[];
  readonly generationLogits?: Logits;
  /** True when streamed text contained U+FFFD that the server produced by decoding a token alone (ensemble streaming); see the README. */
  readonly lossy: boolean;
}

/** The whole result of one request. */
export interface GenerateResult {
  readonly requestId: string;
  readonly model: string;
  /** Text of the first sequence. */
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly sequences: readonly SequenceResult[];
  readonly usage: Usage;
  readonly timings: Timings;
  readonly contextLogits?: Logits;
  readonly perfMetrics?: PerfMetrics;
  /** Present when the request was ended early by the client. */
  readonly earlyStop?: EarlyStopReport;
}

/** A piece of streamed output for one sequence. */
export interface DeltaChunk {
  readonly done: false;
  readonly requestId: string;
  readonly sequenceIndex: number;
  /** New text; may be empty while the client holds back an incomplete character or a possible stop sequence. */
  readonly text: string;
  /** New token ids (raw model), else empty. */
  readonly tokenIds: readonly number[];
  readonly logProbs?: readonly number[];
  /** vLLM: the sampled token of each new position, with its text and rank. */
  readonly logProbTokens?: readonly TokenLogProb[];
  /** vLLM: the `topLogProbs` most likely tokens of each new position, by rank. */
  readonly topLogProbs?: readonly (readonly TokenLogProb[])[];
  /** The running count of tokens of this sequence. */
  readonly totalTokens: number;
  /** True when this text came from a server that decoded a token alone and produced U+FFFD. */
  readonly lossy: boolean;
}

/** The last chunk of every stream, carrying the whole result. */
export interface FinalChunk {
  readonly done: true;
  readonly requestId: string;
  /** Always empty, so `chunk.text` can be written out for every chunk. */
  readonly text: '';
  readonly finishReason: FinishReason;
  readonly usage: Usage;
  readonly timings: Timings;
  readonly result: GenerateResult;
}

/** What `stream()` yields. */
export type StreamChunk = DeltaChunk | FinalChunk;
