/**
 * Triton's vLLM backend (triton-inference-server/vllm_backend `src/model.py`, `utils/request.py`):
 * text in, its sampling options in one `sampling_parameters` JSON, text out. Streaming sends each
 * response's new text, otherwise one response with the whole text; reasons are vLLM's ("stop",
 * "length", "None" until known); a cancelled request is aborted. The corpus is GENERATOR.md's.
 */
import { createHash } from 'node:crypto';
import { TritonError } from '../errors.js';
import { jsonSchemaInstance } from '../guided.js';
import { fp32Tensor, type Tensor, textTensor } from '../tensor.js';
import { decode, encode, incompleteTailLength, tokenBytes, VOCAB_SIZE } from '../vocabulary.js';
import type { EngineContext } from './context.js';
import { refuse } from './finish.js';
import { Generation } from './generation.js';
import { finishGeneration } from './generator-model.js';
import { boolInput, type Inputs, textsInput } from './inputs.js';
import type { InferenceRequest, ModelResponse, ResponseSink } from './request.js';
import { scriptOption, scriptParameter, testHooks } from './test-hooks.js';

/** vLLM's `SamplingParams` default `max_tokens`. */
const DEFAULT_MAX_TOKENS = 16;
const utf8 = new TextDecoder('utf-8');

/**
 * What the backend sends when `SamplingParams` cannot be made (an unknown key, a value of the
 * wrong type or range): `from_dict` logs the cause and returns None, and the request then fails
 * on its first use of it. The client sees only this.
 */
export const VLLM_BAD_SAMPLING = "Error generating stream: 'NoneType' object has no attribute 'lora_name'";

/** `SamplingParams` fields (vLLM v1) plus the backend's `lora_name`, with the type each takes. */
const KEYS: Readonly<Record<string, 'int' | 'float' | 'bool' | 'strings' | 'any'>> = {
  n: 'int',
  presence_penalty: 'float',
  frequency_penalty: 'float',
  repetition_penalty: 'float',
  temperature: 'float',
  top_p: 'float',
  top_k: 'int',
  min_p: 'float',
  seed: 'int',
  stop: 'strings',
  stop_token_ids: 'any',
  bad_words: 'strings',
  ignore_eos: 'bool',
  max_tokens: 'int',
  min_tokens: 'int',
  logprobs: 'int',
  prompt_logprobs: 'int',
  detokenize: 'bool',
  skip_special_tokens: 'bool',
  spaces_between_special_tokens: 'bool',
  include_stop_str_in_output: 'bool',
  structured_outputs: 'any',
  logit_bias: 'any',
  allowed_token_ids: 'any',
  extra_args: 'any',
  lora_name: 'any',
};

interface Sampling {
  readonly maxTokens: number;
  readonly minTokens: number;
  readonly n: number;
  readonly seed: bigint | undefined;
  readonly stop: readonly string[];
  readonly logprobs: number | undefined;
  /** The structured output asked for: its kind (for the event log) and the text it makes. */
  readonly structured: { readonly kind: string; readonly text: string | undefined } | undefined;
  readonly loraName: string | undefined;
}

function bad(): TritonError {
  return new TritonError('INTERNAL', VLLM_BAD_SAMPLING);
}

/** Parses the JSON as `TritonSamplingParams.from_dict` does, with `SamplingParams`' checks. */
function readSampling(json: string): Sampling {
  let dict: unknown;
  try {
    dict = JSON.parse(json);
  } catch {
    throw bad();
  }
  if (typeof dict !== 'object' || dict === null || Array.isArray(dict)) throw bad();
  const values = new Map<string, unknown>();
  for (const [key, value] of Object.entries(dict)) {
    const type = KEYS[key];
    if (type === undefined) throw bad();
    values.set(key, convert(type, value));
  }
  const int = (key: string): number | undefined => values.get(key) as number | undefined;
  const maxTokens = int('max_tokens') ?? DEFAULT_MAX_TOKENS;
  const n = int('n') ?? 1;
  const temperature = values.get('temperature') as number | undefined;
  const logprobs = int('logprobs');
  if (maxTokens < 1 || n < 1 || (temperature !== undefined && temperature < 0)) throw bad();
  if (logprobs !== undefined && logprobs < 0) throw bad();
  const seed = values.get('seed') as number | undefined;
  return {
    maxTokens,
    minTokens: int('min_tokens') ?? 0,
    n,
    seed: seed === undefined ? undefined : BigInt(seed),
    stop: (values.get('stop') as string[] | undefined) ?? [],
    logprobs,
    structured: structured(values.get('structured_outputs')),
    loraName: values.get('lora_name') as string | undefined,
  };
}

/** `from_dict`'s conversions: `int(...)`, `float(...)`, `bool(...)` of the JSON value. */
function convert(type: 'int' | 'float' | 'bool' | 'strings' | 'any', value: unknown): unknown {
  if (value === null || type === 'any') return value;
  if (type === 'bool') return Boolean(value);
  if (type === 'strings') {
    // vLLM takes one stop string or a list of them.
    const list = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) throw bad();
    return list;
  }
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || (type === 'int' && !Number.isInteger(n))) throw bad();
  return n;
}

/** `StructuredOutputsParams(**json.loads(value))`: the backend reads the value as JSON text. */
function structured(value: unknown): Sampling['structured'] {
  if (value === undefined || value === null) return undefined;
  let params: unknown;
  try {
    params = typeof value === 'string' ? JSON.parse(value) : undefined;
  } catch {
    throw bad();
  }
  if (typeof params !== 'object' || params === null) throw bad();
  const p = params as Record<string, unknown>;
  if (p.json_object === true) return { kind: 'json_object', text: '{}' };
  if (p.json !== undefined) {
    let schema: unknown = p.json;
    if (typeof schema === 'string') {
      try {
        schema = JSON.parse(schema);
      } catch {
        throw bad();
      }
    }
    return { kind: 'json', text: JSON.stringify(jsonSchemaInstance(schema)) };
  }
  const kind = ['regex', 'grammar', 'choice', 'structural_tag'].find((k) => p[k] !== undefined);
  if (kind === undefined) throw bad();
  // Other structured outputs leave the corpus as it is (GENERATOR.md "Guided decoding").
  return { kind, text: kind === 'choice' && Array.isArray(p.choice) ? String(p.choice[0]) : undefined };
}

/**
 * The log-prob map of one generated token, as the backend writes it (vLLM v1 order: the sampled
 * token first, then the `k` most likely). The sampled token's rank is 1 + (token mod 3), so it is
 * sometimes outside the top k; the token of rank j is (token + j) mod the vocabulary size, with a
 * log prob that falls with its rank around the sampled one's (GENERATOR.md's).
 */
function logProbMap(token: number, logProb: number, k: number): [string, unknown][] {
  const rank = 1 + (token % 3);
  const entry = (id: number, r: number, lp: number) => ({
    logprob: lp,
    rank: r,
    decoded_token: decode([id]),
  });
  const map: [string, unknown][] = [[String(token), entry(token, rank, logProb)]];
  for (let j = 1; j <= k; j++) {
    if (j === rank) continue;
    const id = (token + j) % VOCAB_SIZE;
    map.push([String(id), entry(id, j, logProb + (rank - j) / 16)]);
  }
  return map;
}

/** Python `json.dumps` of the token maps, keys in their order (JSON.stringify puts integer keys first, sorted). */
function logProbsJson(maps: readonly (readonly [string, unknown][])[]): string {
  const items = maps.map(
    (m) => `{${m.map(([key, v]) => `${JSON.stringify(key)}: ${JSON.stringify(v)}`).join(', ')}}`,
  );
  return `[${items.join(', ')}]`;
}

/**
 * The reply naming the request's images, as the other multimodal models of the fake name theirs
 * (`images.ts`): the backend takes each as base64 bytes (it opens them with PIL), so each is `data`.
 */
function imagesScript(inputs: Inputs): string | undefined {
  const images = textsInput(inputs, 'image');
  if (images === undefined || images.length === 0) return undefined;
  const each = images.map((b64, i) => {
    const bytes = Buffer.from(b64, 'base64');
    return `#${i + 1} data ${bytes.length} bytes ${createHash('sha256').update(bytes).digest('hex').slice(0, 8)}`;
  });
  return `${images.length} image${images.length === 1 ? '' : 's'}: ${each.join('; ')}.`;
}

export async function executeVllm(
  req: InferenceRequest,
  sink: ResponseSink,
  ctx: EngineContext,
): Promise<void> {
  const { inputs, model } = req;
  const prompt = textsInput(inputs, 'text_input')?.[0] ?? '';
  const stream = boolInput(inputs, 'stream') ?? false;
  const excludeInput = boolInput(inputs, 'exclude_input_in_output');
  const prependInput = excludeInput === undefined ? !stream : !excludeInput;
  let sampling: Sampling;
  let hooks: ReturnType<typeof testHooks>;
  try {
    hooks = testHooks(prompt, inputs, scriptParameter(req.parameters));
    // Without the input the backend reads the request parameters as the JSON (the fake's test
    // hook among them is not a vLLM parameter).
    const json =
      textsInput(inputs, 'sampling_parameters')?.[0] ??
      JSON.stringify(Object.fromEntries([...req.parameters].filter(([k]) => k !== 'fake_script')));
    sampling = readSampling(json);
    if (sampling.loraName !== undefined) throw new TritonError('INTERNAL', 'LoRA feature is not enabled.');
    if (prependInput && stream)
      throw new TritonError(
        'INTERNAL',
        'Error generating stream: When streaming, `exclude_input_in_output` = False is not allowed.',
      );
  } catch (err) {
    if (err instanceof TritonError) return refuse(req, sink, ctx, err);
    throw err;
  }
  const wants = {
    finish: boolInput(inputs, 'return_finish_reason') ?? false,
    cumulative: boolInput(inputs, 'return_cumulative_logprob') ?? false,
    logprobs: boolInput(inputs, 'return_logprobs') ?? false,
    numInput: boolInput(inputs, 'return_num_input_tokens') ?? false,
    numOutput: boolInput(inputs, 'return_num_output_tokens') ?? false,
  };
  const script = hooks.script ?? imagesScript(inputs) ?? sampling.structured?.text;
  const inputIds = encode(prompt);
  const options = {
    maxTokens: sampling.maxTokens,
    minTokens: sampling.minTokens,
    stopWords: sampling.stop.map(encode).filter((w) => w.length > 0),
    numReturnSequences: sampling.n,
    returnLogProbs: sampling.logprobs !== undefined,
    ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
    ...scriptOption({ script, guide: undefined }),
  };
  const generation = new Generation(
    {
      model: model.name,
      id: req.id,
      protocol: req.protocol,
      items: [{ inputIds, options }],
      stoppable: false,
      errorAfterTokens: req.faults.errorAfterTokens,
      signal: sink.signal,
      arrivalMs: req.arrivalMs,
      guide: sampling.structured?.kind,
    },
    ctx,
  );
  const sequences = generation.sequences;
  // What each sequence has sent: characters of its text, tokens, log-prob positions.
  const sent = sequences.map(() => ({ chars: 0, tokens: 0 }));

  /** The text of sequence k as vLLM shows it: a matched stop string is not part of it. */
  const textOf = (k: number, finished: boolean): string => {
    const seq = sequences[k]!;
    // vLLM's detokenizer shows no part of a character whose bytes have not all been generated.
    const bytes = tokenBytes(seq.tokens);
    const text = utf8.decode(bytes.subarray(0, bytes.length - incompleteTailLength(bytes)));
    const stop = sampling.stop.find((s) => text.endsWith(s));
    if (finished && seq.reason === 'stop' && stop !== undefined) return text.slice(0, -stop.length);
    if (finished) return text;
    // While running, vLLM holds back what may be the start of a stop string.
    let held = 0;
    for (const s of sampling.stop) {
      for (let n = Math.min(s.length, text.length); n > held; n--) {
        if (text.endsWith(s.slice(0, n))) {
          held = n;
          break;
        }
      }
    }
    return text.slice(0, text.length - held);
  };

  /** One response for the sequences `ks`, with what each brought since its last one. */
  const response = (ks: readonly number[], finished: boolean, whole: boolean): ModelResponse => {
    const texts: string[] = [];
    const reasons: string[] = [];
    const counts: number[] = [];
    const sums: number[] = [];
    const lists: string[] = [];
    let tokens = 0;
    for (const k of ks) {
      const seq = sequences[k]!;
      const s = sent[k]!;
      const text = textOf(k, finished);
      texts.push((whole && prependInput ? prompt : '') + text.slice(whole ? 0 : s.chars));
      reasons.push(finished ? (seq.reason === 'cancelled' ? 'abort' : (seq.reason ?? 'stop')) : 'None');
      const from = whole ? 0 : s.tokens;
      counts.push(seq.tokens.length - from);
      tokens += seq.tokens.length - from;
      sums.push(sampling.logprobs === undefined ? Number.NaN : seq.cumLogProb);
      if (sampling.logprobs === undefined) lists.push('null');
      else {
        const maps = seq.tokens
          .slice(from)
          .map((t, i) => logProbMap(t, seq.logProbs[from + i]!, sampling.logprobs!));
        lists.push(logProbsJson(maps));
      }
      s.chars = text.length;
      s.tokens = seq.tokens.length;
    }
    const n = [ks.length];
    const outputs: Tensor[] = [textTensor('text_output', n, texts)];
    if (wants.finish) outputs.push(textTensor('finish_reason', n, reasons));
    if (wants.cumulative) outputs.push(fp32Tensor('cumulative_logprob', n, sums));
    if (wants.logprobs) outputs.push(textTensor('logprobs', n, lists));
    // `np.asarray(len(prompt_token_ids))`: a 0-d array.
    if (wants.numInput)
      outputs.push({ name: 'num_input_tokens', datatype: 'UINT32', shape: [], data: [inputIds.length] });
    if (wants.numOutput)
      outputs.push({ name: 'num_output_tokens', datatype: 'UINT32', shape: n, data: counts });
    return { outputs, tokens, final: finished };
  };

  const outcome = await generation.run(async (round) => {
    if (!stream) return 'ok';
    // vLLM v1 streams each of n sequences in responses of its own; the backend says not which.
    for (const step of round) {
      if (step.last) sequences[step.k]!.reason = step.reason;
      const done = round.every((s) => s.last) && step === round.at(-1);
      const delivery = await sink.send(response([step.k], done, false));
      if (delivery !== 'ok') return delivery;
    }
    return 'ok';
  });
  await finishGeneration(outcome, sink, async () => {
    if (stream) return 'ok';
    // The backend answers with the engine's last output: with n > 1, the sequence that ended last.
    return sink.send(response([sequences.length - 1], true, true));
  });
}
