import type { GenerateRequest, ModelFlavor } from './request.js';

/**
 * The kind of value an option takes:
 * - `boolean`, `string`, `integer` (within `min`..`max`), `number` (finite, within the range given);
 * - `uint64`: a non-negative safe integer or a bigint below 2^64;
 * - `strings`: non-empty strings; `numbers`: finite numbers (an array or a `Float32Array`);
 * - `tokenIds`: int32 token ids; `tokenIdLists`: non-empty lists of them;
 * - `matrix`: a `Matrix`; `rows`: int32 rows of `columns`;
 * - `object`: the keys of `fields`; `parameters`: boolean, number or string values by name;
 * - `images`: a list of `ImageInput`: `http(s)`/`data:` URLs, or non-empty bytes with an image media type.
 */
export type OptionType =
  | 'boolean'
  | 'string'
  | 'integer'
  | 'number'
  | 'uint64'
  | 'strings'
  | 'numbers'
  | 'tokenIds'
  | 'tokenIdLists'
  | 'matrix'
  | 'rows'
  | 'object'
  | 'parameters'
  | 'images';

/**
 * What one request option (or one field of an object option) takes, and where it goes. The client
 * checks every value against it before anything is sent; whether the deployed model has the input is
 * checked later, against its config.
 */
export interface RequestOption {
  readonly type: OptionType;
  /**
   * The model flavors with an input for it. The raw `tensorrt_llm` model takes the text options
   * (`tokenizer`) only when the client has a tokenizer to turn them into token ids.
   */
  readonly flavors: readonly ModelFlavor[];
  /** Every request has it (an object option: every value of the object). */
  readonly required?: true;
  /** Smallest value (numbers). */
  readonly min?: number;
  /** Largest value (numbers). */
  readonly max?: number;
  /** `min` itself is out of range. */
  readonly minExclusive?: true;
  /** The empty string or list is refused. */
  readonly nonEmpty?: true;
  /** A string must match it; `patternRule` says so in words. */
  readonly pattern?: RegExp;
  readonly patternRule?: string;
  /** `rows`: the meaning of each column. */
  readonly columns?: readonly string[];
  /** `object`: its fields. */
  readonly fields?: Readonly<Record<string, RequestOption>>;
  /** `parameters`: names with this prefix are refused. */
  readonly reservedPrefix?: string;
  /** The raw `tensorrt_llm` model takes it as text only with a tokenizer on the client. */
  readonly tokenizer?: true;
  /**
   * Flavors in which the option becomes a tensor of more than one dimension. Triton's HTTP generate
   * extension cannot carry those, and the HTTP transport sends every ensemble, BLS and LLM-API call
   * and every stream through it: there the option needs gRPC (a unary call to the raw model over
   * HTTP goes to `/infer`, which carries it).
   */
  readonly notOverHttpGenerate?: readonly ModelFlavor[];
}

/** The descriptor of every {@link GenerateRequest} option, by name. */
export type RequestOptions = { readonly [K in keyof GenerateRequest]-?: RequestOption };

const ALL = ['ensemble', 'bls', 'tensorrt_llm', 'llmapi'] as const;
const TEXT = ['ensemble', 'bls'] as const;
const TRTLLM = ['ensemble', 'bls', 'tensorrt_llm'] as const;
const RAW = ['tensorrt_llm'] as const;
const BLS = ['bls'] as const;
const LLMAPI = ['llmapi'] as const;
const VLLM = ['vllm'] as const;
// Options Triton's vLLM backend takes too, in its `sampling_parameters` JSON or an input of its own.
const ANY = [...ALL, 'vllm'] as const;
const TRTLLM_VLLM = [...TRTLLM, 'vllm'] as const;
// The flavors with an image input in NVIDIA's model repository (the multimodal ensemble is an ensemble).
const IMAGES = ['ensemble', 'bls', 'llmapi', 'vllm'] as const;
const INT32 = { min: -2147483648, max: 2147483647 } as const;
const COUNT = { min: 0, max: 2147483647 } as const;
const POSITIVE = { min: 1, max: 2147483647 } as const;

/**
 * Every option of {@link GenerateRequest}: its type, range and the model flavors that take it. The
 * client's own checks are made from this table, and so are the option lists of the AI SDK provider
 * and the LangChain model, so a new option is described once. Its type keeps the literal values,
 * so that the per-flavor request types below are computed from it.
 */
export const REQUEST_OPTIONS = {
  prompt: { type: 'string', flavors: ANY, nonEmpty: true, tokenizer: true },
  inputIds: { type: 'tokenIds', flavors: RAW, nonEmpty: true },
  images: { type: 'images', flavors: IMAGES },
  maxTokens: { type: 'integer', flavors: ANY, required: true, ...POSITIVE },
  stopWords: { type: 'strings', flavors: ANY, tokenizer: true },
  stopWordIds: { type: 'tokenIdLists', flavors: RAW, notOverHttpGenerate: RAW },
  badWords: { type: 'strings', flavors: TRTLLM, tokenizer: true, notOverHttpGenerate: RAW },
  badWordIds: { type: 'tokenIdLists', flavors: RAW, notOverHttpGenerate: RAW },
  endId: { type: 'integer', flavors: TRTLLM, ...INT32 },
  padId: { type: 'integer', flavors: TRTLLM, ...INT32 },
  topK: { type: 'integer', flavors: ANY, ...COUNT },
  topP: { type: 'number', flavors: ANY, min: 0, minExclusive: true, max: 1 },
  topPMin: { type: 'number', flavors: RAW, min: 0 },
  topPDecay: { type: 'number', flavors: RAW, min: 0 },
  topPResetIds: { type: 'integer', flavors: RAW, ...INT32 },
  temperature: { type: 'number', flavors: ANY, min: 0 },
  lengthPenalty: { type: 'number', flavors: TRTLLM },
  earlyStopping: { type: 'boolean', flavors: RAW },
  repetitionPenalty: { type: 'number', flavors: TRTLLM_VLLM, min: 0 },
  presencePenalty: { type: 'number', flavors: ANY },
  frequencyPenalty: { type: 'number', flavors: ANY },
  minTokens: { type: 'integer', flavors: TRTLLM_VLLM, ...COUNT },
  seed: { type: 'uint64', flavors: ANY },
  beamWidth: { type: 'integer', flavors: TRTLLM, ...POSITIVE },
  beamSearchDiversityRate: { type: 'number', flavors: RAW, min: 0 },
  numReturnSequences: { type: 'integer', flavors: TRTLLM, ...POSITIVE },
  bestOf: { type: 'integer', flavors: LLMAPI, ...POSITIVE },
  returnLogProbs: { type: 'boolean', flavors: ANY },
  topLogProbs: { type: 'integer', flavors: VLLM, ...COUNT },
  returnContextLogits: { type: 'boolean', flavors: TRTLLM },
  returnGenerationLogits: { type: 'boolean', flavors: TRTLLM },
  returnPerfMetrics: { type: 'boolean', flavors: ALL },
  returnNumTokens: { type: 'boolean', flavors: TRTLLM_VLLM },
  excludeInputInOutput: { type: 'boolean', flavors: ANY },
  embeddingBias: {
    type: 'object',
    flavors: TEXT,
    fields: {
      words: { type: 'strings', flavors: TEXT, required: true },
      weights: { type: 'numbers', flavors: TEXT, required: true },
    },
  },
  embeddingBiasVector: { type: 'numbers', flavors: RAW },
  promptEmbeddingTable: { type: 'matrix', flavors: TRTLLM, notOverHttpGenerate: TRTLLM },
  promptVocabSize: { type: 'integer', flavors: TRTLLM, ...COUNT },
  // The raw model's per-token prompt_table_extra_ids cannot be built without the vocabulary size.
  promptTableExtraId: { type: 'uint64', flavors: TEXT },
  lora: {
    type: 'object',
    flavors: ANY,
    fields: {
      taskId: { type: 'uint64', flavors: ALL },
      weights: { type: 'matrix', flavors: TRTLLM, notOverHttpGenerate: TRTLLM },
      config: {
        type: 'rows',
        flavors: TRTLLM,
        columns: ['module_id', 'layer_idx', 'adapter_size'],
        notOverHttpGenerate: TRTLLM,
      },
      name: { type: 'string', flavors: [...LLMAPI, 'vllm'] },
      path: { type: 'string', flavors: LLMAPI },
      ckptSource: {
        type: 'string',
        flavors: LLMAPI,
        pattern: /^(hf|nemo)$/,
        patternRule: "'hf' or 'nemo'",
      },
    },
  },
  guidedDecoding: {
    type: 'object',
    flavors: TRTLLM_VLLM,
    fields: {
      type: { type: 'string', flavors: TRTLLM_VLLM, required: true, nonEmpty: true },
      guide: { type: 'string', flavors: TRTLLM_VLLM },
    },
  },
  decoderTextInput: { type: 'string', flavors: TEXT },
  decoderInputIds: { type: 'tokenIds', flavors: RAW },
  tensorrtLlmModelName: { type: 'string', flavors: BLS },
  draftModelName: { type: 'string', flavors: BLS },
  numDraftTokens: { type: 'integer', flavors: BLS, ...COUNT },
  useDraftLogits: { type: 'boolean', flavors: BLS },
  draftInputIds: { type: 'tokenIds', flavors: RAW },
  draftLogits: { type: 'matrix', flavors: RAW, notOverHttpGenerate: RAW },
  draftAcceptanceThreshold: { type: 'number', flavors: RAW, min: 0 },
  lookahead: {
    type: 'object',
    flavors: RAW,
    fields: {
      windowSize: { type: 'integer', flavors: RAW, required: true, ...POSITIVE },
      ngramSize: { type: 'integer', flavors: RAW, required: true, ...POSITIVE },
      verificationSetSize: { type: 'integer', flavors: RAW, required: true, ...POSITIVE },
    },
  },
  kvCacheRetention: {
    type: 'object',
    flavors: RAW,
    fields: {
      tokenRanges: { type: 'rows', flavors: RAW, columns: ['start', 'end', 'priority'] },
      tokenRangeDurationsMs: { type: 'tokenIds', flavors: RAW },
      decodePriority: { type: 'integer', flavors: RAW, min: 0, max: 100 },
      decodeDurationMs: { type: 'integer', flavors: RAW, ...COUNT },
    },
  },
  promptIgnoreLength: { type: 'integer', flavors: RAW, ...COUNT },
  // Request ids travel in logs and the gRPC stop path too: printable and short.
  requestId: {
    type: 'string',
    flavors: ANY,
    pattern: /^[\x21-\x7e]{1,128}$/,
    patternRule: '1-128 printable ASCII characters without spaces',
  },
  parameters: { type: 'parameters', flavors: ANY, reservedPrefix: 'triton_' },
} as const satisfies RequestOptions;

/**
 * The names of the {@link GenerateRequest} options a model flavor takes, by {@link REQUEST_OPTIONS}:
 * the per-flavor request types (`EnsembleRequest`...) are made of them.
 */
export type FlavorKeys<F extends ModelFlavor> = {
  [K in keyof typeof REQUEST_OPTIONS]: F extends (typeof REQUEST_OPTIONS)[K]['flavors'][number] ? K : never;
}[keyof typeof REQUEST_OPTIONS];

/**
 * What an `ensemble` model takes. Computed from {@link REQUEST_OPTIONS}.
 *
 * @interface
 */
export type EnsembleRequest = Pick<GenerateRequest, FlavorKeys<'ensemble'>>;

/**
 * What `tensorrt_llm_bls` takes: the ensemble's inputs plus the BLS-only ones. Computed from {@link REQUEST_OPTIONS}.
 *
 * @interface
 */
export type BlsRequest = Pick<GenerateRequest, FlavorKeys<'bls'>>;

/**
 * What the raw `tensorrt_llm` model takes (text options need a tokenizer on the client). Computed from {@link REQUEST_OPTIONS}.
 *
 * @interface
 */
export type TensorrtLlmRequest = Pick<GenerateRequest, FlavorKeys<'tensorrt_llm'>>;

/**
 * What the LLM-API `tensorrt_llm` model takes. Computed from {@link REQUEST_OPTIONS}.
 *
 * @interface
 */
export type LlmApiRequest = Pick<GenerateRequest, FlavorKeys<'llmapi'>>;

/**
 * What a model of Triton's vLLM backend takes. Computed from {@link REQUEST_OPTIONS}.
 *
 * @interface
 */
export type VllmRequest = Pick<GenerateRequest, FlavorKeys<'vllm'>>;
