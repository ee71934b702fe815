import { invalidArgument, TritonLlmError } from '../errors.js';
import type { GenerateRequest, ModelFlavor } from '../request/request.js';
import { createTensor, type Tensor } from '../tensors/tensor.js';
import { encodeWordList } from '../tensors/word-list.js';
import type { Tokenizer } from '../text/tokenizer.js';
import type { InferRequest } from '../transport.js';
import { BINDINGS, type BindingValue } from './bindings.js';
import { PERF_OUTPUTS } from './decode-response.js';
import { encodeImages } from './images.js';
import type { ModelSchema } from './schema.js';
import { encodeVllmRequest } from './vllm/encode.js';

/** Everything the encoder needs besides the request itself. */
export interface EncodeContext {
  readonly schema: ModelSchema;
  readonly requestId: string;
  readonly streaming: boolean;
  readonly tokenizer?: Tokenizer;
  /** The transport's protocol: HTTP's generate extension cannot carry the raw model's word lists. */
  readonly protocol?: 'grpc' | 'http';
}

/** An encoded request plus what the response decoder needs to know about it. */
export interface EncodedRequest {
  readonly request: InferRequest;
  /** Prompt ids sent to the raw model. */
  readonly promptIds?: readonly number[];
  /** The effective end id (given, or the tokenizer's) for finish reasons. */
  readonly endId?: number;
  /** Whether the model was asked to leave the prompt out; if it could not be asked, the decoder strips it. */
  readonly promptExcluded: boolean;
  /** The stop strings were sent to the model too: it ends the request at them itself. */
  readonly serverMatchesStops: boolean;
}

const PROMPT_INPUT = { ensemble: 'text_input', bls: 'text_input', llmapi: 'text_input' } as const;
const MAX_TOKENS_INPUT = {
  ensemble: 'max_tokens',
  bls: 'max_tokens',
  tensorrt_llm: 'request_output_len',
  llmapi: 'sampling_param_max_tokens',
} as const;
const STREAM_INPUT = {
  ensemble: 'stream',
  bls: 'stream',
  tensorrt_llm: 'streaming',
  llmapi: 'streaming',
} as const;

/** The flavors each option has an input in, over all of its rows of the table. */
const OPTION_FLAVORS: ReadonlyMap<string, ReadonlySet<ModelFlavor>> = (() => {
  const map = new Map<string, Set<ModelFlavor>>();
  for (const binding of BINDINGS) {
    const flavors = map.get(binding.option) ?? new Set<ModelFlavor>();
    for (const flavor of Object.keys(binding.names) as ModelFlavor[]) flavors.add(flavor);
    map.set(binding.option, flavors);
  }
  return map;
})();

/**
 * Maps a validated request to the input names and data types the deployed model declares.
 * Options the model lacks are refused here, before anything is sent.
 */
export function encodeGenerateRequest(req: GenerateRequest, ctx: EncodeContext): EncodedRequest {
  const { schema } = ctx;
  if (schema.flavor === 'vllm') return encodeVllmRequest(req, ctx);
  const inputs: Tensor[] = [];
  const add = (name: string, value: BindingValue, option: string): void => {
    inputs.push(buildTensor(schema, name, value, option));
  };
  const flavor = schema.flavor;
  let promptIds: number[] | undefined;
  let serverMatchesStops = false;
  let endId = req.endId;
  let padId = req.padId;

  if (flavor === 'tensorrt_llm') {
    if (req.inputIds !== undefined) promptIds = [...req.inputIds];
    else promptIds = requireTokenizer(ctx, 'prompt').encode(req.prompt ?? '', { addSpecialTokens: true });
    if (promptIds.length === 0) throw invalidArgument('prompt', req.prompt, 'encodes to no tokens');
    add('input_ids', { kind: 'list', values: promptIds }, 'prompt');
    add('input_lengths', { kind: 'scalar', value: promptIds.length }, 'prompt');
    endId ??= ctx.tokenizer?.endId;
    padId ??= ctx.tokenizer?.padId ?? ctx.tokenizer?.endId;
    // Over HTTP the [1, 2, N] stop list cannot be sent, so stop strings are matched on the client
    // alone (and the request stopped in-band); explicit id lists still reach the transport, which
    // refuses them with a clear error.
    const stopStrings = ctx.protocol === 'http' ? undefined : req.stopWords;
    if (req.stopWords !== undefined && req.stopWords.length > 0) requireTokenizer(ctx, 'stopWords');
    const stopWords = wordIds(ctx, 'stopWords', stopStrings, req.stopWordIds);
    if (stopWords.length > 0) add('stop_words_list', { kind: 'words', words: stopWords }, 'stopWords');
    serverMatchesStops = stopStrings !== undefined && stopStrings.length > 0;
    if (req.promptTableExtraId !== undefined) {
      // prompt_table_extra_ids is one id per prompt token, set where the token is a prompt-table id
      // (>= the vocabulary size, which the client does not know); a list of another length is
      // dropped by the backend without an error.
      throw new TritonLlmError(
        'invalid_argument',
        `promptTableExtraId: model '${schema.model}' (tensorrt_llm) takes prompt_table_extra_ids, one id per prompt ` +
          'token (the id where the token is a prompt-table id, else 0), and ignores a list of another length; ' +
          'send that list with infer(), or call the ensemble or BLS, whose preprocessing builds it',
        { model: schema.model, field: 'promptTableExtraId' },
      );
    }
    const badWords = wordIds(ctx, 'badWords', req.badWords, req.badWordIds);
    if (badWords.length > 0) add('bad_words_list', { kind: 'words', words: badWords }, 'badWords');
  } else {
    if (req.inputIds !== undefined) {
      throw new TritonLlmError(
        'invalid_argument',
        `inputIds: model '${schema.model}' (${flavor}) takes text; pass prompt, or use the raw tensorrt_llm model for token ids`,
        { model: schema.model, field: 'inputIds' },
      );
    }
    for (const option of ['stopWordIds', 'badWordIds'] as const) {
      if (req[option] !== undefined)
        unsupported(schema, option, [option === 'stopWordIds' ? 'stop_words_list' : 'bad_words_list']);
    }
    add(PROMPT_INPUT[flavor], { kind: 'scalar', value: req.prompt ?? '' }, 'prompt');
  }
  add(MAX_TOKENS_INPUT[flavor], { kind: 'scalar', value: req.maxTokens }, 'maxTokens');
  const streamName = STREAM_INPUT[flavor];
  if (schema.inputs.has(streamName)) add(streamName, { kind: 'scalar', value: ctx.streaming }, 'stream');

  // Defaults a demanding user expects: the prompt is not echoed, token counts and finish reasons are
  // returned where the deployed model can give them. Applied only where the model has the input.
  const effective: GenerateRequest = {
    ...req,
    ...(endId !== undefined ? { endId } : {}),
    ...(padId !== undefined ? { padId } : {}),
  };
  const soft = new Set<string>();
  const defaults: Partial<Record<keyof GenerateRequest, boolean>> = {
    excludeInputInOutput: true,
    returnNumTokens: true,
  };
  for (const [key, value] of Object.entries(defaults) as [keyof GenerateRequest, boolean][]) {
    if (effective[key] === undefined) {
      (effective as unknown as Record<string, unknown>)[key] = value;
      soft.add(key);
    }
  }
  if (flavor === 'tensorrt_llm') {
    // The raw model's word lists were encoded above, from ids or through the tokenizer.
    soft.add('stopWords');
    soft.add('badWords');
  }
  if (req.endId === undefined) soft.add('endId');
  if (req.padId === undefined) soft.add('padId');

  let promptExcluded = false;
  for (const binding of BINDINGS) {
    if (flavor === 'tensorrt_llm' && (binding.option === 'stopWords' || binding.option === 'badWords'))
      continue;
    const value = binding.value(effective);
    if (value === undefined) continue;
    const candidates = binding.names[flavor];
    // An option with a row per flavor (`prompt_table_extra_id` / `_ids`) is sent by the row of this flavor.
    if (candidates === undefined && OPTION_FLAVORS.get(binding.option)?.has(flavor) === true) continue;
    const name = candidates?.find((n) => schema.inputs.has(n));
    if (name === undefined) {
      if (soft.has(binding.option)) continue;
      unsupported(schema, binding.option, candidates ?? []);
    }
    if (binding.option === 'excludeInputInOutput')
      promptExcluded = value.kind === 'scalar' && value.value === true;
    if (binding.option === 'stopWords') serverMatchesStops = true;
    add(name, value, binding.option);
  }
  if (req.images !== undefined && req.images.length > 0) {
    const images = encodeImages(req.images, schema);
    add(images.name, images.value, 'images');
  }
  if (flavor === 'llmapi') {
    for (const name of ['return_finish_reason', 'return_stop_reason']) {
      if (schema.inputs.has(name)) add(name, { kind: 'scalar', value: true }, name);
    }
  }

  return {
    request: {
      model: schema.model,
      id: ctx.requestId,
      inputs,
      outputs: wantedOutputs(schema, req),
      ...(req.parameters !== undefined ? { parameters: req.parameters } : {}),
      // Text models answer Triton's /generate over HTTP; the raw model's typed tensors need /infer.
      endpoint: flavor === 'tensorrt_llm' ? 'infer' : 'generate',
    },
    ...(promptIds !== undefined ? { promptIds } : {}),
    ...(endId !== undefined ? { endId } : {}),
    promptExcluded: promptExcluded || effective.excludeInputInOutput === false,
    serverMatchesStops,
  };
}

/**
 * The backend's in-band stop request for a running request (raw and LLM-API models): same id,
 * `stop` true, and the smallest valid values for the other required inputs.
 */
export function encodeStopRequest(schema: ModelSchema, requestId: string): InferRequest {
  const inputs: Tensor[] = [];
  const add = (name: string, value: BindingValue): void => {
    if (schema.inputs.has(name)) inputs.push(buildTensor(schema, name, value, 'stop'));
  };
  if (schema.flavor === 'tensorrt_llm') {
    add('input_ids', { kind: 'list', values: [0] });
    add('input_lengths', { kind: 'scalar', value: 0 });
    add('request_output_len', { kind: 'scalar', value: 0 });
  } else {
    add('text_input', { kind: 'scalar', value: '' });
  }
  add('stop', { kind: 'scalar', value: true });
  return { model: schema.model, id: requestId, inputs, endpoint: 'infer' };
}

/**
 * The outputs the response decoder reads, where the model declares them. Asking for them by name
 * matters: a model answering with every output sends ~19 tensors per streamed token, and decoding
 * those dominated the client's CPU time per token (bench:overhead).
 */
function wantedOutputs(schema: ModelSchema, req: GenerateRequest): string[] {
  const names = [
    ...(schema.flavor === 'tensorrt_llm' ? ['output_ids', 'sequence_length'] : ['text_output']),
    // Only a request for several sequences gets responses of a sequence other than 0 (beams share
    // one response); the counter is not asked for with every token of every other request.
    ...((req.numReturnSequences ?? 1) > 1 ? ['sequence_index'] : []),
    'num_input_tokens',
    'num_output_tokens',
    'finish_reason',
    'stop_reason',
    ...(req.returnLogProbs === true ? ['cum_log_probs', 'output_log_probs', 'cumulative_logprob'] : []),
    ...(req.returnContextLogits === true ? ['context_logits'] : []),
    ...(req.returnGenerationLogits === true ? ['generation_logits'] : []),
    ...(req.returnPerfMetrics === true ? PERF_OUTPUTS.map(([name]) => name) : []),
  ];
  return names.filter((n) => schema.outputs.has(n));
}

function buildTensor(schema: ModelSchema, name: string, value: BindingValue, option: string): Tensor {
  const spec = schema.inputs.get(name);
  if (spec === undefined) unsupported(schema, option, [name]);
  const batch = schema.maxBatchSize > 0 ? [1] : [];
  let shape: number[];
  let values: readonly (number | bigint | boolean | string)[] | Float32Array | Int32Array;
  switch (value.kind) {
    case 'scalar':
      shape = [...batch, 1];
      // The disaggregated-serving BLS declares early_stopping INT32 where the raw model has BOOL.
      values = [
        typeof value.value === 'boolean' && spec.datatype !== 'BOOL' ? Number(value.value) : value.value,
      ];
      break;
    case 'list':
      shape = [...batch, value.values.length];
      values = value.values;
      break;
    case 'matrix':
      shape = [...batch, value.matrix.shape[0], value.matrix.shape[1]];
      values = Array.from(value.matrix.data);
      break;
    case 'rows':
      shape = [...batch, value.rows.length, value.width];
      values = value.rows.flat();
      break;
    case 'words': {
      const packed = encodeWordList([value.words]);
      shape = schema.maxBatchSize > 0 ? [...packed.shape] : packed.shape.slice(1);
      values = packed.data;
      break;
    }
  }
  return createTensor(name, spec.datatype, shape, values);
}

function requireTokenizer(ctx: EncodeContext, option: string): Tokenizer {
  if (ctx.tokenizer === undefined) {
    throw new TritonLlmError(
      'invalid_argument',
      `${option}: model '${ctx.schema.model}' is the raw tensorrt_llm model and takes token ids; ` +
        'pass inputIds (and stopWordIds/badWordIds), or create TritonLlm with a tokenizer to use text',
      { model: ctx.schema.model, field: option },
    );
  }
  return ctx.tokenizer;
}

function wordIds(
  ctx: EncodeContext,
  option: 'stopWords' | 'badWords',
  words: readonly string[] | undefined,
  ids: readonly (readonly number[])[] | undefined,
): number[][] {
  const out = (ids ?? []).map((w) => [...w]);
  if (words !== undefined && words.length > 0) {
    const tokenizer = requireTokenizer(ctx, option);
    for (const word of words) {
      const encoded = tokenizer.encode(word, { addSpecialTokens: false });
      if (encoded.length > 0) out.push(encoded);
    }
  }
  return out;
}

function unsupported(schema: ModelSchema, option: string, candidates: readonly string[]): never {
  const looked =
    candidates.length > 0 ? ` (looked for input ${candidates.map((c) => `'${c}'`).join(' or ')})` : '';
  throw new TritonLlmError(
    'invalid_argument',
    `${option}: model '${schema.model}' (${schema.flavor}, backend ${schema.backendVersion}) does not support this option${looked}`,
    { model: schema.model, field: option },
  );
}
