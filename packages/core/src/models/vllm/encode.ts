import { TritonLlmError } from '../../errors.js';
import type { GenerateRequest } from '../../request/request.js';
import { createTensor, type Tensor } from '../../tensors/tensor.js';
import type { InferRequest } from '../../transport.js';
import type { EncodeContext, EncodedRequest } from '../encode-request.js';
import type { ModelSchema } from '../schema.js';

/** A JSON value of `sampling_parameters`; bigints are written as exact JSON integers. */
type SamplingValue = number | bigint | string | boolean | readonly string[];

/**
 * One row of the mapping from SDK options to the keys of vLLM's `SamplingParams`, which Triton's
 * vLLM backend (triton-inference-server/vllm_backend, `utils/vllm_backend_utils.py`) reads from
 * its one `sampling_parameters` JSON input instead of an input tensor per option.
 */
export interface VllmSamplingKey {
  /** The option's path in {@link GenerateRequest}. */
  readonly option: string;
  readonly key: string;
  readonly value: (r: GenerateRequest) => SamplingValue | undefined;
}

/** The options that become `sampling_parameters` keys. */
export const VLLM_SAMPLING: readonly VllmSamplingKey[] = [
  { option: 'maxTokens', key: 'max_tokens', value: (r) => r.maxTokens },
  { option: 'temperature', key: 'temperature', value: (r) => r.temperature },
  { option: 'topP', key: 'top_p', value: (r) => r.topP },
  { option: 'topK', key: 'top_k', value: (r) => r.topK },
  { option: 'minTokens', key: 'min_tokens', value: (r) => r.minTokens },
  { option: 'seed', key: 'seed', value: (r) => r.seed },
  { option: 'stopWords', key: 'stop', value: (r) => r.stopWords },
  { option: 'presencePenalty', key: 'presence_penalty', value: (r) => r.presencePenalty },
  { option: 'frequencyPenalty', key: 'frequency_penalty', value: (r) => r.frequencyPenalty },
  { option: 'repetitionPenalty', key: 'repetition_penalty', value: (r) => r.repetitionPenalty },
  // vLLM returns the sampled token's log prob plus this many alternatives per generated token.
  {
    option: 'returnLogProbs',
    key: 'logprobs',
    value: (r) => (r.returnLogProbs === true && r.topLogProbs === undefined ? 0 : undefined),
  },
  { option: 'topLogProbs', key: 'logprobs', value: (r) => r.topLogProbs },
  { option: 'lora.name', key: 'lora_name', value: (r) => r.lora?.name },
  {
    option: 'guidedDecoding.type',
    key: 'structured_outputs',
    value: (r) => (r.guidedDecoding === undefined ? undefined : structuredOutputs(r.guidedDecoding)),
  },
];

/**
 * Every option (by path) a vLLM model takes: the `sampling_parameters` keys, and the options that
 * are inputs of their own or shape the call. Every other option is refused on a vLLM model: the
 * backend has nothing that honours it.
 */
export const VLLM_OPTIONS: ReadonlySet<string> = new Set([
  ...VLLM_SAMPLING.map((k) => k.option),
  'guidedDecoding.guide',
  'prompt',
  'images',
  'excludeInputInOutput',
  'returnNumTokens',
  'requestId',
  'parameters',
]);

const HANDLED: ReadonlySet<string> = new Set([...VLLM_OPTIONS].map((o) => o.split('.')[0]!));

/** Why an option the backend could take in principle is still refused. */
const REFUSED_WHY: Readonly<Record<string, string>> = {
  numReturnSequences:
    'the vLLM backend streams each of n sequences in responses of their own without saying which sequence ' +
    '(vLLM v1) and answers a non-streaming request with the last one only; send one request per sequence',
  inputIds: 'it takes text; pass prompt',
  bestOf: 'vLLM v1 has no best_of',
};

/**
 * Encodes a request for Triton's vLLM backend: the prompt as `text_input`, every sampling option
 * in the `sampling_parameters` JSON, and the switches of its extra outputs. An option the backend
 * cannot honour is refused by name before anything is sent.
 */
export function encodeVllmRequest(req: GenerateRequest, ctx: EncodeContext): EncodedRequest {
  const { schema } = ctx;
  for (const [option, value] of Object.entries(req)) {
    if (value === undefined || HANDLED.has(option)) continue;
    if (option === 'numReturnSequences' && value === 1) continue;
    refuse(
      schema,
      option,
      REFUSED_WHY[option] ?? "Triton's vLLM backend has no input or sampling parameter for it",
    );
  }
  if (req.lora !== undefined) {
    for (const [field, value] of Object.entries(req.lora)) {
      if (value !== undefined && field !== 'name')
        refuse(schema, `lora.${field}`, 'the vLLM backend selects a LoRA adapter by name (lora.name) only');
    }
  }
  const excluded = req.excludeInputInOutput ?? true;
  if (ctx.streaming && !excluded) {
    refuse(
      schema,
      'excludeInputInOutput',
      'the vLLM backend refuses to echo the prompt when streaming ("When streaming, `exclude_input_in_output` = False is not allowed")',
    );
  }

  const inputs: Tensor[] = [];
  const add = (name: string, values: readonly (string | boolean)[], option: string): void => {
    const spec = schema.inputs.get(name);
    if (spec === undefined) refuse(schema, option, `the model declares no input '${name}'`);
    // No batch dimension: the backend's auto-completed config has max_batch_size 0.
    const shape = schema.maxBatchSize > 0 ? [1, values.length] : [values.length];
    inputs.push(createTensor(name, spec.datatype, shape, values));
  };
  const optional = (name: string, value: boolean): void => {
    if (schema.inputs.has(name)) add(name, [value], name);
  };

  add('text_input', [req.prompt ?? ''], 'prompt');
  add('sampling_parameters', [samplingJson(req)], 'maxTokens');
  if (ctx.streaming) add('stream', [true], 'stream');
  else optional('stream', false);
  if (req.excludeInputInOutput !== undefined)
    add('exclude_input_in_output', [excluded], 'excludeInputInOutput');
  else optional('exclude_input_in_output', true);
  optional('return_finish_reason', true);
  // Counts by default where the model can give them; asked for explicitly, they must be there.
  if (req.returnNumTokens === true) {
    add('return_num_input_tokens', [true], 'returnNumTokens');
    add('return_num_output_tokens', [true], 'returnNumTokens');
  } else if (req.returnNumTokens === undefined) {
    optional('return_num_input_tokens', true);
    optional('return_num_output_tokens', true);
  }
  const logProbs = req.returnLogProbs === true || req.topLogProbs !== undefined;
  if (logProbs) {
    add('return_logprobs', [true], 'returnLogProbs');
    // vLLM sums the log probs only of requests that asked for them; otherwise the value is NaN.
    add('return_cumulative_logprob', [true], 'returnLogProbs');
  }
  const images = vllmImages(req, schema);
  if (images.length > 0) add('image', images, 'images');

  const outputs = [
    'text_output',
    'finish_reason',
    'num_input_tokens',
    'num_output_tokens',
    ...(logProbs ? ['cumulative_logprob', 'logprobs'] : []),
  ].filter((n) => schema.outputs.has(n));
  const request: InferRequest = {
    model: schema.model,
    id: ctx.requestId,
    inputs,
    outputs,
    ...(req.parameters !== undefined ? { parameters: req.parameters } : {}),
    endpoint: 'generate',
  };
  return {
    request,
    promptExcluded: true,
    serverMatchesStops: (req.stopWords?.length ?? 0) > 0,
  };
}

/** The `sampling_parameters` JSON of a request: one key per option set. */
export function samplingJson(req: GenerateRequest): string {
  const entries: string[] = [];
  const seen = new Set<string>();
  for (const { key, value } of VLLM_SAMPLING) {
    const v = value(req);
    if (v === undefined || seen.has(key)) continue;
    seen.add(key);
    // A UINT64 seed past 2^53 stays exact: Python's json reads integers of any size.
    entries.push(`${JSON.stringify(key)}:${typeof v === 'bigint' ? v.toString() : JSON.stringify(v)}`);
  }
  return `{${entries.join(',')}}`;
}

/**
 * vLLM's `StructuredOutputsParams` for a guided-decoding request, as the JSON text the backend
 * parses a second time (`StructuredOutputsParams(**json.loads(value))`).
 */
function structuredOutputs(guided: NonNullable<GenerateRequest['guidedDecoding']>): string {
  const { type, guide } = guided;
  if (type === 'json') return JSON.stringify({ json_object: true });
  const key = GUIDE_KEYS[type];
  if (key === undefined) {
    throw new TritonLlmError(
      'invalid_argument',
      `guidedDecoding.type: '${type}' has no vLLM structured output; use one of ${['json', ...Object.keys(GUIDE_KEYS)].join(', ')}`,
      { field: 'guidedDecoding.type' },
    );
  }
  if (guide === undefined || guide === '') {
    throw new TritonLlmError('invalid_argument', `guidedDecoding.guide: guide type '${type}' needs a guide`, {
      field: 'guidedDecoding.guide',
    });
  }
  return JSON.stringify({ [key]: guide });
}

/** The SDK's guide types (TensorRT-LLM's names) and the `StructuredOutputsParams` field of each. */
const GUIDE_KEYS: Readonly<Record<string, string>> = {
  json_schema: 'json',
  regex: 'regex',
  ebnf_grammar: 'grammar',
  structural_tag: 'structural_tag',
};

/**
 * The backend's `image` input: each image's bytes in base64 (it decodes them with PIL). A `data:`
 * URI gives its payload; an http(s) URL cannot be sent, as the backend fetches nothing.
 */
function vllmImages(req: GenerateRequest, schema: ModelSchema): string[] {
  return (req.images ?? []).map((image, i) => {
    if ('data' in image) return base64(image.data);
    const comma = image.url.indexOf(',');
    if (image.url.startsWith('data:') && image.url.slice(0, comma).endsWith(';base64'))
      return image.url.slice(comma + 1);
    return refuse(
      schema,
      `images[${i}]`,
      'the vLLM backend takes image bytes (base64), not URLs it would fetch; pass { data, mediaType } or a base64 data: URI',
    );
  });
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  // In pieces: String.fromCharCode takes its bytes as arguments, and arguments are limited.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function refuse(schema: ModelSchema, option: string, why: string): never {
  throw new TritonLlmError(
    'invalid_argument',
    `${option}: model '${schema.model}' (vllm) does not support this option: ${why}`,
    { model: schema.model, field: option },
  );
}
