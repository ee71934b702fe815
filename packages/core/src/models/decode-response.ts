import { TritonLlmError } from '../errors.js';
import type { Logits, PerfMetrics } from '../result.js';
import type { ModelSchema } from '../schema.js';
import {
  elementCount,
  type Tensor,
  tensorBigInts,
  tensorBytes,
  tensorNumbers,
  tensorStrings,
} from '../tensor.js';
import type { InferResponse } from '../transport.js';

/** What one response says about one sequence. */
export interface SequenceOutput {
  readonly sequenceIndex: number;
  /** Token ids (raw model), already cut to `sequence_length`. */
  readonly tokenIds?: readonly number[];
  /** Text bytes as the server sent them (text models), kept as bytes so nothing is lost before decoding. */
  readonly text?: string;
  readonly cumLogProb?: number;
  readonly logProbs?: readonly number[];
  readonly finishReason?: string;
  readonly stopReason?: string;
  readonly generationLogits?: Logits;
}

/** One response, split per sequence, plus request-level outputs. */
export interface DecodedResponse {
  readonly sequences: readonly SequenceOutput[];
  readonly numInputTokens?: number;
  readonly numOutputTokens?: number;
  readonly contextLogits?: Logits;
  readonly perfMetrics?: PerfMetrics;
}

/** Perf-metric outputs by wire name and result key. */
export const PERF_OUTPUTS: readonly [string, keyof PerfMetrics][] = [
  ['kv_cache_alloc_new_blocks', 'kvCacheAllocNewBlocks'],
  ['kv_cache_reused_blocks', 'kvCacheReusedBlocks'],
  ['kv_cache_alloc_total_blocks', 'kvCacheAllocTotalBlocks'],
  ['arrival_time_ns', 'arrivalTimeNs'],
  ['first_scheduled_time_ns', 'firstScheduledTimeNs'],
  ['first_token_time_ns', 'firstTokenTimeNs'],
  ['last_token_time_ns', 'lastTokenTimeNs'],
  ['acceptance_rate', 'acceptanceRate'],
  ['total_accepted_draft_tokens', 'totalAcceptedDraftTokens'],
  ['total_draft_tokens', 'totalDraftTokens'],
];

/**
 * Splits a response into per-sequence outputs. Works on gRPC tensors (`[batch, beams, ...]`) and
 * on HTTP `/generate` JSON tensors (flat, shape `[n]` or `[]`) alike: the number of sequences is read
 * from the primary output's element count, and the other per-sequence outputs are split evenly.
 */
export function decodeResponse(
  response: InferResponse,
  schema: ModelSchema,
  wants: {
    readonly logProbs: boolean;
    readonly perfMetrics: boolean;
    readonly contextLogits: boolean;
    readonly generationLogits: boolean;
  },
): DecodedResponse {
  const out = new Map(response.outputs.map((t) => [t.name, t]));
  if (out.size === 0) return { sequences: [] };
  const baseIndex = firstNumber(out.get('sequence_index')) ?? 0;
  const sequences: SequenceOutput[] = [];

  let count: number;
  let ids: number[][] | undefined;
  let texts: string[] | undefined;
  if (schema.flavor === 'tensorrt_llm') {
    const outputIds = out.get('output_ids');
    if (outputIds === undefined) return { sequences: [] };
    const lengths = out.has('sequence_length') ? tensorNumbers(out.get('sequence_length')!) : undefined;
    const flat = tensorNumbers(outputIds);
    count = lengths?.length ?? beamsOf(outputIds);
    const width = count > 0 ? flat.length / count : 0;
    if (!Number.isInteger(width)) {
      throw new TritonLlmError('protocol', `output_ids has ${flat.length} values for ${count} sequences`, {
        model: schema.model,
        requestId: response.id,
      });
    }
    ids = [];
    for (let b = 0; b < count; b++) {
      const row = flat.slice(b * width, (b + 1) * width);
      ids.push(row.slice(0, Math.min(lengths?.[b] ?? row.length, row.length)));
    }
  } else {
    const text = out.get('text_output');
    if (text === undefined) return { sequences: [] };
    texts = tensorStrings(text);
    count = texts.length;
    // A streamed response of a BLS/ensemble that carries only a final flag can hold one empty string.
    if (
      text.datatype === 'BYTES' &&
      tensorBytes(text).every((b) => b.length === 0) &&
      response.final &&
      count === 1
    ) {
      texts = [''];
    }
  }

  const cum = wants.logProbs
    ? numbersOf(out.get('cum_log_probs') ?? out.get('cumulative_logprob'))
    : undefined;
  const perToken = wants.logProbs ? numbersOf(out.get('output_log_probs')) : undefined;
  const finish = out.has('finish_reason') ? tensorStrings(out.get('finish_reason')!) : undefined;
  const stop = out.has('stop_reason') ? tensorStrings(out.get('stop_reason')!) : undefined;
  const genLogits = wants.generationLogits ? logitsOf(out.get('generation_logits')) : undefined;

  for (let b = 0; b < count; b++) {
    const tokenIds = ids?.[b];
    const logProbs =
      perToken !== undefined && count > 0
        ? perToken.slice(...evenSlice(perToken.length, count, b))
        : undefined;
    const seq: SequenceOutput = {
      sequenceIndex: baseIndex + b,
      ...(tokenIds !== undefined ? { tokenIds } : {}),
      ...(texts?.[b] !== undefined ? { text: texts[b] } : {}),
      ...(cum?.[b] !== undefined ? { cumLogProb: cum[b] } : {}),
      ...(logProbs !== undefined ? { logProbs } : {}),
      ...(finish?.[b] !== undefined && finish[b] !== '' ? { finishReason: finish[b] } : {}),
      ...(stop?.[b] !== undefined && stop[b] !== '' ? { stopReason: stop[b] } : {}),
      ...(genLogits !== undefined && count === 1 ? { generationLogits: genLogits } : {}),
    };
    sequences.push(seq);
  }

  const numIn = firstNumber(out.get('num_input_tokens'));
  const numOut = firstNumber(out.get('num_output_tokens'));
  const contextLogits = wants.contextLogits ? logitsOf(out.get('context_logits')) : undefined;
  let perfMetrics: PerfMetrics | undefined;
  if (wants.perfMetrics) {
    const metrics: Record<string, number | bigint> = {};
    for (const [name, key] of PERF_OUTPUTS) {
      const t = out.get(name);
      const v = name.endsWith('_time_ns') ? firstBigInt(t) : firstNumber(t);
      if (v !== undefined) metrics[key] = v;
    }
    if (Object.keys(metrics).length > 0) perfMetrics = metrics;
  }
  return {
    sequences,
    ...(numIn !== undefined ? { numInputTokens: numIn } : {}),
    ...(numOut !== undefined ? { numOutputTokens: numOut } : {}),
    ...(contextLogits !== undefined ? { contextLogits } : {}),
    ...(perfMetrics !== undefined ? { perfMetrics } : {}),
  };
}

function beamsOf(t: Tensor): number {
  // gRPC: [batch, beams, tokens]; HTTP JSON: one flat sequence.
  return t.shape.length === 3 ? (t.shape[1] ?? 1) : 1;
}

function evenSlice(length: number, parts: number, index: number): [number, number] {
  const width = length / parts;
  return [Math.round(index * width), Math.round((index + 1) * width)];
}

function numbersOf(t: Tensor | undefined): number[] | undefined {
  return t === undefined ? undefined : tensorNumbers(t);
}

function firstBigInt(t: Tensor | undefined): bigint | undefined {
  if (t === undefined || elementCount(t.shape) === 0) return undefined;
  return tensorBigInts(t)[0];
}

function firstNumber(t: Tensor | undefined): number | undefined {
  if (t === undefined || elementCount(t.shape) === 0) return undefined;
  return tensorNumbers(t)[0];
}

function logitsOf(t: Tensor | undefined): Logits | undefined {
  if (t === undefined) return undefined;
  const values = tensorNumbers(t);
  // Unrequested logits come back as a single 0; that is not a logits tensor.
  if (values.length <= 1) return undefined;
  return { data: Float32Array.from(values), shape: [...t.shape] };
}
