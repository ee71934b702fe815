import { describe, expect, it } from 'vitest';
import { type GenerateRequest, type ModelFlavor, TritonLlmError } from '../src/index.js';
import { BINDINGS } from '../src/models/bindings.js';
import { VLLM_OPTIONS } from '../src/models/vllm/encode.js';
import {
  type OptionType,
  REQUEST_OPTIONS,
  type RequestOption,
  validateRequest,
} from '../src/transport-kit.js';

// Typed as Required, so an option added to GenerateRequest must be added here too.
const EVERY_OPTION: Required<GenerateRequest> = {
  prompt: 'hi',
  inputIds: [1, 2],
  images: [{ url: 'https://example.com/a.png' }, { data: new Uint8Array([1]), mediaType: 'image/png' }],
  maxTokens: 4,
  stopWords: ['stop'],
  stopWordIds: [[7]],
  badWords: ['bad'],
  badWordIds: [[8]],
  endId: 2,
  padId: 0,
  topK: 1,
  topP: 0.9,
  topPMin: 0,
  topPDecay: 0.5,
  topPResetIds: 1,
  temperature: 0.5,
  lengthPenalty: 1,
  earlyStopping: true,
  repetitionPenalty: 1,
  presencePenalty: 0,
  frequencyPenalty: 0,
  minTokens: 1,
  seed: 7n,
  beamWidth: 1,
  beamSearchDiversityRate: 0,
  numReturnSequences: 1,
  bestOf: 1,
  returnLogProbs: true,
  topLogProbs: 2,
  returnContextLogits: false,
  returnGenerationLogits: false,
  returnPerfMetrics: true,
  returnNumTokens: true,
  excludeInputInOutput: true,
  embeddingBias: { words: ['a'], weights: [0.5] },
  embeddingBiasVector: new Float32Array([0, 1]),
  promptEmbeddingTable: { data: [1, 2], shape: [1, 2] },
  promptVocabSize: 1,
  promptTableExtraId: 1,
  lora: {
    taskId: 1,
    weights: { data: [1], shape: [1, 1] },
    config: [[1, 2, 3]],
    name: 'a',
    path: '/a',
    ckptSource: 'nemo',
  },
  guidedDecoding: { type: 'json' },
  decoderTextInput: 'd',
  decoderInputIds: [1],
  tensorrtLlmModelName: 'tensorrt_llm',
  draftModelName: 'draft',
  numDraftTokens: 2,
  useDraftLogits: false,
  draftInputIds: [1],
  draftLogits: { data: [0.1, 0.2], shape: [1, 2] },
  draftAcceptanceThreshold: 0.5,
  lookahead: { windowSize: 4, ngramSize: 3, verificationSetSize: 2 },
  kvCacheRetention: {
    tokenRanges: [[0, 2, 50]],
    tokenRangeDurationsMs: [100],
    decodePriority: 10,
    decodeDurationMs: 5,
  },
  promptIgnoreLength: 1,
  requestId: '42',
  parameters: { fake_script: 'ok' },
};

/** A value of the wrong shape for each type, and where under the option the check points. */
const WRONG = {
  boolean: ['yes', ''],
  string: [5, ''],
  integer: [1.5, ''],
  number: [Number.NaN, ''],
  uint64: [-1, ''],
  strings: [['ok', ''], '[1]'],
  numbers: [[1, Number.POSITIVE_INFINITY], '[1]'],
  tokenIds: [[1, 2 ** 31], '[1]'],
  tokenIdLists: [[[1], []], '[1]'],
  matrix: [{ data: [1], shape: [1, 2] }, '.data'],
  rows: [[[1, 2]], '[0]'],
  object: [[], ''],
  parameters: [{ x: null }, '.x'],
  images: [[{ url: 'ftp://host/a.png' }], '[0].url'],
} as const satisfies Record<OptionType, readonly [unknown, string]>;

/** Every option and field of an object option, by its path (`lora.taskId`). */
function described(): [string, RequestOption][] {
  const out: [string, RequestOption][] = [];
  for (const [name, option] of Object.entries<RequestOption>(REQUEST_OPTIONS)) {
    out.push([name, option]);
    for (const [field, sub] of Object.entries(option.fields ?? {})) out.push([`${name}.${field}`, sub]);
  }
  return out;
}

/** The base request with `path` set to `value` (the other fields of an object option kept valid). */
function withValue(path: string, value: unknown): Record<string, unknown> {
  const [name, field] = path.split('.') as [keyof GenerateRequest, string | undefined];
  const base: Record<string, unknown> = { prompt: 'hi', maxTokens: 4 };
  base[name] = field === undefined ? value : { ...(EVERY_OPTION[name] as object), [field]: value };
  return base;
}

function refusal(request: Record<string, unknown>): TritonLlmError {
  try {
    validateRequest(request as unknown as GenerateRequest);
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(request, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
}

describe('REQUEST_OPTIONS', () => {
  it('describes every GenerateRequest option and nothing else', () => {
    expect(Object.keys(REQUEST_OPTIONS).sort()).toEqual(Object.keys(EVERY_OPTION).sort());
  });

  it('accepts a request that uses every option (but inputIds, which excludes prompt)', () => {
    const { inputIds, prompt, ...rest } = EVERY_OPTION;
    expect(() => validateRequest({ ...rest, prompt })).not.toThrow();
    expect(() => validateRequest({ ...rest, inputIds })).not.toThrow();
  });

  it.each(described())(
    'a value of the wrong type for %s is refused with err.field naming it',
    (path, option) => {
      const [value, at] = WRONG[option.type];
      const err = refusal(withValue(path, value));
      expect(err.code).toBe('invalid_argument');
      expect(err.field).toBe(`${path}${at}`);
      expect(err.message.startsWith(`${path}${at}: `)).toBe(true);
    },
  );

  it.each(described().filter(([, o]) => o.min !== undefined))(
    'a value below the range of %s is refused with the range in the message',
    (path, option) => {
      const min = option.min as number;
      const value = option.minExclusive === true ? min : min - 1;
      const err = refusal(withValue(path, value));
      expect(err.field).toBe(path);
      expect(err.message).toContain(option.max === undefined ? `>= ${min}` : `${min}, ${option.max}]`);
    },
  );

  it.each(described().filter(([, o]) => o.type === 'object'))(
    'a misspelt field of %s is refused with a suggestion',
    (path, option) => {
      const field = Object.keys(option.fields ?? {})[0] as string;
      const misspelt = `${field.slice(0, -1)}_${field.slice(-1)}`;
      const err = refusal(withValue(`${path}.${misspelt}`, 1));
      expect(err.field).toBe(`${path}.${misspelt}`);
      expect(err.message).toBe(`${path}.${misspelt}: unknown option; did you mean ${field}? (got 1)`);
    },
  );

  it('a required field of an object option is refused when absent', () => {
    const err = refusal({ prompt: 'hi', maxTokens: 4, embeddingBias: { weights: [1] } });
    expect(err.field).toBe('embeddingBias.words');
  });

  // The wire names per flavor live in the mapping table; the descriptor must name the same flavors.
  it('names, for every option with a model input, the flavors the mapping table has inputs for', () => {
    const mapped = new Map<string, Set<ModelFlavor>>();
    for (const binding of BINDINGS) {
      const flavors = mapped.get(binding.option) ?? new Set<ModelFlavor>();
      for (const flavor of Object.keys(binding.names) as ModelFlavor[]) flavors.add(flavor);
      mapped.set(binding.option, flavors);
    }
    // The vLLM backend takes its options as keys of one JSON input, not by the table.
    for (const path of VLLM_OPTIONS) mapped.get(path)?.add('vllm');
    const inTable = described().filter(([path]) => mapped.has(path));
    expect(inTable.length).toBe(mapped.size);
    for (const [path, option] of inTable) {
      // Text options reach the raw model as token-id lists the request encoder builds, not by the table.
      const flavors = option.flavors.filter((f) => !(option.tokenizer === true && f === 'tensorrt_llm'));
      expect([path, [...(mapped.get(path) ?? [])].sort()]).toEqual([path, [...flavors].sort()]);
    }
  });
});
