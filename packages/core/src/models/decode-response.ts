import { TritonLlmError } from '../errors.js';
import type { GenerateRequest } from '../request/request.js';
import type { Logits, PerfMetrics, TokenLogProb } from '../result.js';
import { elementCount } from '../tensors/data-types.js';
import {
  firstTensorNumber,
  tensorBigInts,
  tensorBytes,
  tensorNumbers,
  tensorStrings,
} from '../tensors/readers.js';
import type { Tensor } from '../tensors/tensor.js';
import type { InferResponse } from '../transport.js';
import type { ModelSchema } from './schema.js';
import { decodeVllmResponse } from './vllm/decode.js';

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
  /** Tokens this response brought (vLLM's `num_output_tokens`, a count per response). */
  readonly tokenCount?: number;
  /** The sampled token of each position this response brought, with its log prob (vLLM). */
  readonly logProbTokens?: readonly TokenLogProb[];
  /** The most likely tokens of each position this response brought, by rank (vLLM). */
  readonly topLogProbs?: readonly (readonly TokenLogProb[])[];
}

/** One response, split per sequence, plus request-level outputs. */
export interface DecodedResponse {
  readonly sequences: readonly SequenceOutput[];
  readonly numInputTokens?: number;
  readonly numOutputTokens?: number;
  readonly contextLogits?: Logits;
  readonly perfMetrics?: PerfMetrics;
}

/** Perf-metric outputs by wire name and result key (the LLM-API model's kv-cache names among them). */
export const PERF_OUTPUTS: readonly [string, keyof PerfMetrics][] = [
  ['kv_cache_alloc_new_blocks', 'kvCacheAllocNewBlocks'],
  ['kv_cache_reused_blocks', 'kvCacheReusedBlocks'],
  ['kv_cache_reused_block', 'kvCacheReusedBlocks'],
  ['kv_cache_missed_block', 'kvCacheMissedBlocks'],
  ['kv_cache_hit_rate', 'kvCacheHitRate'],
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
  wants: DecodeWants,
): DecodedResponse {
  const outputs = response.outputs;
  if (outputs.length === 0) return NOTHING;
  if (schema.flavor === 'vllm') return decodeVllmResponse(response, schema);
  // One pass over the outputs instead of one scan per name: this runs for every streamed token.
  const found = FOUND;
  for (let i = 0; i < outputs.length; i++) {
    const slot = SLOTS.get(outputs[i]!.name);
    if (slot !== undefined) found[slot] ??= outputs[i];
  }
  const outputIds = found[OUTPUT_IDS];
  const lengthTensor = found[SEQUENCE_LENGTH];
  const text = found[TEXT_OUTPUT];
  const indexTensor = found[SEQUENCE_INDEX];
  const numInTensor = found[NUM_INPUT_TOKENS];
  const numOutTensor = found[NUM_OUTPUT_TOKENS];
  const finishTensor = found[FINISH_REASON];
  const stopTensor = found[STOP_REASON];
  const cumTensor = found[CUM_LOG_PROBS] ?? found[CUMULATIVE_LOGPROB];
  const perTokenTensor = found[OUTPUT_LOG_PROBS];
  const genLogitsTensor = found[GENERATION_LOGITS];
  const contextLogitsTensor = found[CONTEXT_LOGITS];
  // The scratch keeps no response alive. A loop, not `fill`: `fill` is a call into C++ on every
  // token, where these few stores compile inline.
  for (let k = 0; k < found.length; k++) found[k] = undefined;
  const baseIndex = firstNumber(indexTensor) ?? 0;

  let count: number;
  let ids: number[][] | undefined;
  let texts: string[] | undefined;
  if (schema.flavor === 'tensorrt_llm') {
    if (outputIds === undefined) return NOTHING;
    const lengths = lengthTensor !== undefined ? tensorNumbers(lengthTensor) : undefined;
    const flat = tensorNumbers(outputIds);
    count = lengths?.length ?? beamsOf(outputIds);
    const width = count > 0 ? flat.length / count : 0;
    if (!Number.isInteger(width)) {
      throw new TritonLlmError('protocol', `output_ids has ${flat.length} values for ${count} sequences`, {
        model: schema.model,
        requestId: response.id,
      });
    }
    if (count === 1) {
      const length = Math.min(lengths?.[0] ?? flat.length, flat.length);
      ids = [length === flat.length ? flat : flat.slice(0, length)];
    } else {
      ids = [];
      for (let b = 0; b < count; b++) {
        const row = flat.slice(b * width, (b + 1) * width);
        ids.push(row.slice(0, Math.min(lengths?.[b] ?? row.length, row.length)));
      }
    }
  } else {
    if (text === undefined) return NOTHING;
    texts = tensorStrings(text);
    count = texts.length;
    // A streamed response of a BLS/ensemble that carries only a final flag can hold one empty string.
    if (
      count === 1 &&
      response.final &&
      text.datatype === 'BYTES' &&
      tensorBytes(text).every((b) => b.length === 0)
    ) {
      texts = [''];
    }
  }

  const cum = wants.logProbs ? numbersOf(cumTensor) : undefined;
  const perToken = wants.logProbs ? numbersOf(perTokenTensor) : undefined;
  const finish = finishTensor !== undefined ? tensorStrings(finishTensor) : undefined;
  const stop = stopTensor !== undefined ? tensorStrings(stopTensor) : undefined;
  const genLogits = wants.generationLogits ? logitsOf(genLogitsTensor) : undefined;

  const sequences: SequenceOutput[] = new Array(count);
  for (let b = 0; b < count; b++) {
    // Plain assignments: this runs for every streamed token.
    const seq: { -readonly [K in keyof SequenceOutput]: SequenceOutput[K] } = {
      sequenceIndex: baseIndex + b,
    };
    const tokenIds = ids?.[b];
    if (tokenIds !== undefined) seq.tokenIds = tokenIds;
    const text = texts?.[b];
    if (text !== undefined) seq.text = text;
    const c = cum?.[b];
    if (c !== undefined) seq.cumLogProb = c;
    if (perToken !== undefined) seq.logProbs = perToken.slice(...evenSlice(perToken.length, count, b));
    const f = finish?.[b];
    if (f !== undefined && f !== '') seq.finishReason = f;
    const r = stop?.[b];
    if (r !== undefined && r !== '') seq.stopReason = r;
    if (genLogits !== undefined)
      seq.generationLogits = count === 1 ? genLogits : logitsPart(genLogits, count, b);
    sequences[b] = seq;
  }

  const decoded: { -readonly [K in keyof DecodedResponse]: DecodedResponse[K] } = { sequences };
  const numIn = firstNumber(numInTensor);
  if (numIn !== undefined) decoded.numInputTokens = numIn;
  const numOut = firstNumber(numOutTensor);
  if (numOut !== undefined) decoded.numOutputTokens = numOut;
  if (wants.contextLogits) {
    const contextLogits = logitsOf(contextLogitsTensor);
    if (contextLogits !== undefined) decoded.contextLogits = contextLogits;
  }
  if (wants.perfMetrics) {
    const metrics: Record<string, number | bigint> = {};
    let any = false;
    for (const [name, key] of PERF_OUTPUTS) {
      const v = metricOf(find(outputs, name), name.endsWith('_time_ns'));
      if (v !== undefined) {
        metrics[key] = v;
        any = true;
      }
    }
    if (any) decoded.perfMetrics = metrics;
  }
  return decoded;
}

/** Which optional outputs the caller asked for. */
export interface DecodeWants {
  readonly logProbs: boolean;
  readonly perfMetrics: boolean;
  readonly contextLogits: boolean;
  readonly generationLogits: boolean;
}

/** Every combination, made once: a request shares one instead of keeping an object of its own. */
const WANTS: readonly DecodeWants[] = Array.from({ length: 16 }, (_, bits) =>
  Object.freeze({
    logProbs: (bits & 1) !== 0,
    perfMetrics: (bits & 2) !== 0,
    contextLogits: (bits & 4) !== 0,
    generationLogits: (bits & 8) !== 0,
  }),
);

/** The optional outputs `request` asked for. */
export function decodeWants(request: GenerateRequest): DecodeWants {
  const bits =
    (request.returnLogProbs === true ? 1 : 0) |
    (request.returnPerfMetrics === true ? 2 : 0) |
    (request.returnContextLogits === true ? 4 : 0) |
    (request.returnGenerationLogits === true ? 8 : 0);
  return WANTS[bits]!;
}

const NOTHING: DecodedResponse = Object.freeze({ sequences: Object.freeze([]) as readonly SequenceOutput[] });

// The outputs decodeResponse reads, by slot; the first output of a name is the one read.
const OUTPUT_IDS = 0;
const SEQUENCE_LENGTH = 1;
const TEXT_OUTPUT = 2;
const SEQUENCE_INDEX = 3;
const NUM_INPUT_TOKENS = 4;
const NUM_OUTPUT_TOKENS = 5;
const FINISH_REASON = 6;
const STOP_REASON = 7;
const CUM_LOG_PROBS = 8;
const CUMULATIVE_LOGPROB = 9;
const OUTPUT_LOG_PROBS = 10;
const GENERATION_LOGITS = 11;
const CONTEXT_LOGITS = 12;
const SLOTS: ReadonlyMap<string, number> = new Map([
  ['output_ids', OUTPUT_IDS],
  ['sequence_length', SEQUENCE_LENGTH],
  ['text_output', TEXT_OUTPUT],
  ['sequence_index', SEQUENCE_INDEX],
  ['num_input_tokens', NUM_INPUT_TOKENS],
  ['num_output_tokens', NUM_OUTPUT_TOKENS],
  ['finish_reason', FINISH_REASON],
  ['stop_reason', STOP_REASON],
  ['cum_log_probs', CUM_LOG_PROBS],
  ['cumulative_logprob', CUMULATIVE_LOGPROB],
  ['output_log_probs', OUTPUT_LOG_PROBS],
  ['generation_logits', GENERATION_LOGITS],
  ['context_logits', CONTEXT_LOGITS],
]);
// Scratch of the response being decoded (decoding is synchronous and never nested).
const FOUND: (Tensor | undefined)[] = new Array(SLOTS.size).fill(undefined);

/** A response holds a handful of outputs: a scan costs less than building a map for every token. */
function find(outputs: readonly Tensor[], name: string): Tensor | undefined {
  for (let i = 0; i < outputs.length; i++) if (outputs[i]!.name === name) return outputs[i];
  return undefined;
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
  return firstTensorNumber(t);
}

/**
 * Sequence `index` of `count` in logits that hold all of them: gRPC's `[batch, beams, tokens, vocab]`
 * is cut along the beams (each part `[1, 1, tokens, vocab]`, as a single sequence's), the flat
 * tensor of HTTP `/generate` into equal parts.
 */
function logitsPart(logits: Logits, count: number, index: number): Logits {
  const { data, shape } = logits;
  const [start, end] = evenSlice(data.length, count, index);
  const part = data.subarray(start, end);
  const beamShape =
    shape.length === 4 && shape[1] === count ? [shape[0] ?? 1, 1, ...shape.slice(2)] : [part.length];
  return { data: part, shape: beamShape };
}

/**
 * One perf metric. The LLM-API model builds every metric tensor with `text_output`'s data type, so
 * they arrive as BYTES strings (`"1"`, `"76735247746000"`) whatever its config declares; the other
 * models send numbers.
 */
function metricOf(t: Tensor | undefined, nanoseconds: boolean): number | bigint | undefined {
  if (t === undefined || elementCount(t.shape) === 0) return undefined;
  if (t.datatype !== 'BYTES') return nanoseconds ? firstBigInt(t) : firstNumber(t);
  const text = tensorStrings(t)[0]?.trim() ?? '';
  if (nanoseconds) return /^-?\d+$/.test(text) ? BigInt(text) : undefined;
  const value = text === '' ? Number.NaN : Number(text);
  return Number.isFinite(value) ? value : undefined;
}

function logitsOf(t: Tensor | undefined): Logits | undefined {
  if (t === undefined) return undefined;
  const values = tensorNumbers(t);
  // Unrequested logits come back as a single 0; that is not a logits tensor.
  if (values.length <= 1) return undefined;
  return { data: Float32Array.from(values), shape: [...t.shape] };
}
