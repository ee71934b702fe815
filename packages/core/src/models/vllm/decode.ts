import { TritonLlmError } from '../../errors.js';
import type { TokenLogProb } from '../../result.js';
import { elementCount } from '../../tensors/data-types.js';
import { tensorNumbers, tensorStrings } from '../../tensors/readers.js';
import type { Tensor } from '../../tensors/tensor.js';
import type { InferResponse } from '../../transport.js';
import type { DecodedResponse, SequenceOutput } from '../decode-response.js';
import type { ModelSchema } from '../schema.js';

/**
 * Reads a response of Triton's vLLM backend: `text_output` is the new text of each sequence when
 * streaming and its whole text otherwise; `num_output_tokens` the tokens this response brought
 * (UINT32, one per sequence); `finish_reason` vLLM's reason as text ("None" until it ends);
 * `logprobs` a JSON list per sequence of the new positions, each mapping token ids to their log
 * prob, rank and text; `cumulative_logprob` their running sum (NaN unless log probs were asked for).
 */
export function decodeVllmResponse(response: InferResponse, schema: ModelSchema): DecodedResponse {
  let text: Tensor | undefined;
  let finish: Tensor | undefined;
  let numIn: Tensor | undefined;
  let numOut: Tensor | undefined;
  let cum: Tensor | undefined;
  let logprobs: Tensor | undefined;
  for (const t of response.outputs) {
    if (t.name === 'text_output') text ??= t;
    else if (t.name === 'finish_reason') finish ??= t;
    else if (t.name === 'num_input_tokens') numIn ??= t;
    else if (t.name === 'num_output_tokens') numOut ??= t;
    else if (t.name === 'cumulative_logprob') cum ??= t;
    else if (t.name === 'logprobs') logprobs ??= t;
  }
  if (text === undefined) return { sequences: [] };
  const texts = tensorStrings(text);
  const reasons = finish === undefined ? undefined : tensorStrings(finish);
  const counts = numOut === undefined ? undefined : tensorNumbers(numOut);
  const sums = cum === undefined ? undefined : tensorNumbers(cum);
  const lists = logprobs === undefined ? undefined : tensorStrings(logprobs);
  const sequences = texts.map((t, k): SequenceOutput => {
    const seq: { -readonly [K in keyof SequenceOutput]: SequenceOutput[K] } = { sequenceIndex: k, text: t };
    const reason = finishReason(reasons?.[k]);
    if (reason !== undefined) seq.finishReason = reason;
    const count = counts?.[k];
    if (count !== undefined) seq.tokenCount = count;
    const sum = sums?.[k];
    if (sum !== undefined && !Number.isNaN(sum)) seq.cumLogProb = sum;
    const list = lists?.[k];
    if (list !== undefined && list !== 'null') {
      const positions = readLogProbs(list, schema, response.id);
      seq.logProbs = positions.map((p) => p.sampled.logProb);
      seq.logProbTokens = positions.map((p) => p.sampled);
      seq.topLogProbs = positions.map((p) => p.top);
    }
    return seq;
  });
  const decoded: { -readonly [K in keyof DecodedResponse]: DecodedResponse[K] } = { sequences };
  // A 0-d array on the wire (the backend sends `np.asarray(n)`): its one element is the count.
  if (numIn !== undefined && elementCount(numIn.shape) > 0) {
    const n = tensorNumbers(numIn)[0];
    if (n !== undefined) decoded.numInputTokens = n;
  }
  return decoded;
}

/** vLLM's finish reason in the SDK's words: "abort" is a cancelled request; "None" is no reason yet. */
function finishReason(reason: string | undefined): string | undefined {
  if (reason === undefined || reason === '' || reason === 'None') return undefined;
  return reason === 'abort' ? 'cancelled' : reason;
}

interface Position {
  readonly sampled: TokenLogProb;
  readonly top: readonly TokenLogProb[];
}

/**
 * One `logprobs` JSON: a list of `{ "<token id>": { logprob, rank, decoded_token } }`. vLLM puts
 * the sampled token first in each (the sampler's order), then its top alternatives; JavaScript
 * orders integer-like keys numerically, so the first key is read from the text itself.
 */
function readLogProbs(json: string, schema: ModelSchema, requestId: string): Position[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (cause) {
    throw new TritonLlmError('protocol', `logprobs output is not JSON: ${json.slice(0, 80)}`, {
      model: schema.model,
      requestId,
      cause,
    });
  }
  const firsts = firstKeys(json);
  if (!Array.isArray(parsed) || firsts.length !== parsed.length) {
    throw new TritonLlmError(
      'protocol',
      `logprobs output is not a list of token maps: ${json.slice(0, 80)}`,
      {
        model: schema.model,
        requestId,
      },
    );
  }
  return parsed.map(
    (entry: Record<string, { logprob?: unknown; rank?: unknown; decoded_token?: unknown }>, i) => {
      const all: TokenLogProb[] = Object.entries(entry).map(([id, v]) => ({
        tokenId: Number(id),
        token: typeof v.decoded_token === 'string' ? v.decoded_token : '',
        // vLLM writes -inf as -Infinity, which is not JSON; a token that improbable arrives as null.
        logProb: typeof v.logprob === 'number' ? v.logprob : Number.NEGATIVE_INFINITY,
        rank: typeof v.rank === 'number' ? v.rank : Number.POSITIVE_INFINITY,
      }));
      const sampled = all.find((t) => t.tokenId === firsts[i]) ?? all[0];
      if (sampled === undefined) {
        throw new TritonLlmError(
          'protocol',
          `logprobs output has a position without tokens: ${json.slice(0, 80)}`,
          {
            model: schema.model,
            requestId,
          },
        );
      }
      return { sampled, top: all.sort((a, b) => a.rank - b.rank) };
    },
  );
}

/** The first key of every object one level inside the top-level list, in the text's order. */
function firstKeys(json: string): number[] {
  const keys: number[] = [];
  let depth = 0;
  let awaitingKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip it whole (its escapes included); record it when it is the awaited key.
      let end = i + 1;
      while (end < json.length && json.charCodeAt(end) !== 0x22) end += json.charCodeAt(end) === 0x5c ? 2 : 1;
      if (awaitingKey) keys.push(Number(json.slice(i + 1, end)));
      awaitingKey = false;
      i = end;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      awaitingKey = c === 0x7b && depth === 2;
    } else if (c === 0x5d || c === 0x7d) {
      if (awaitingKey) keys.push(Number.NaN);
      awaitingKey = false;
      depth--;
    }
  }
  return keys;
}
