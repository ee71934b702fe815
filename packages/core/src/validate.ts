import { invalidArgument } from './errors.js';
import { type GenerateRequest, REQUEST_KEYS } from './request.js';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const UINT64_MAX = (1n << 64n) - 1n;

/**
 * Checks a request before any I/O: every problem is a `TritonLlmError` with code
 * `invalid_argument` whose message names the field and the value. Checks that depend on the
 * deployed model (is the option supported?) happen later, in the schema mapping.
 */
export function validateRequest(request: GenerateRequest): void {
  if (request === null || typeof request !== 'object')
    throw invalidArgument('request', request, 'must be an object');
  // Plain JavaScript callers get no compile-time check, and a misspelt option silently ignored
  // would change what is generated.
  for (const key of Object.keys(request)) {
    if (!REQUEST_KEYS.has(key)) {
      const near = nearestKey(key, REQUEST_KEYS);
      const why = near === undefined ? 'unknown option' : `unknown option; did you mean ${near}?`;
      throw invalidArgument(key, (request as unknown as Record<string, unknown>)[key], why);
    }
  }
  const r = request;
  if (r.prompt === undefined && r.inputIds === undefined) {
    throw invalidArgument('prompt', undefined, 'a prompt (or inputIds for the raw model) is required');
  }
  if (r.prompt !== undefined && r.inputIds !== undefined) {
    throw invalidArgument('inputIds', r.inputIds, 'give either prompt or inputIds, not both');
  }
  if (r.prompt !== undefined) {
    if (typeof r.prompt !== 'string') throw invalidArgument('prompt', r.prompt, 'must be a string');
    if (r.prompt.length === 0) throw invalidArgument('prompt', r.prompt, 'must not be empty');
  }
  if (r.inputIds !== undefined) {
    idList('inputIds', r.inputIds);
    if (r.inputIds.length === 0) throw invalidArgument('inputIds', r.inputIds, 'must not be empty');
  }
  integer('maxTokens', r.maxTokens, 1, INT32_MAX);
  stringList('stopWords', r.stopWords);
  stringList('badWords', r.badWords);
  wordIds('stopWordIds', r.stopWordIds);
  wordIds('badWordIds', r.badWordIds);
  optionalInteger('endId', r.endId, INT32_MIN, INT32_MAX);
  optionalInteger('padId', r.padId, INT32_MIN, INT32_MAX);
  optionalInteger('topK', r.topK, 0, INT32_MAX);
  if (r.topP !== undefined) {
    finite('topP', r.topP);
    if (!(r.topP > 0 && r.topP <= 1)) throw invalidArgument('topP', r.topP, 'must be in (0, 1]');
  }
  optionalFinite('topPMin', r.topPMin, 0);
  optionalFinite('topPDecay', r.topPDecay, 0);
  optionalInteger('topPResetIds', r.topPResetIds, INT32_MIN, INT32_MAX);
  optionalFinite('temperature', r.temperature, 0);
  optionalFinite('lengthPenalty', r.lengthPenalty);
  optionalBoolean('earlyStopping', r.earlyStopping);
  optionalFinite('repetitionPenalty', r.repetitionPenalty, 0);
  optionalFinite('presencePenalty', r.presencePenalty);
  optionalFinite('frequencyPenalty', r.frequencyPenalty);
  optionalInteger('minTokens', r.minTokens, 0, INT32_MAX);
  if (r.seed !== undefined) uint64('seed', r.seed);
  optionalInteger('beamWidth', r.beamWidth, 1, INT32_MAX);
  optionalFinite('beamSearchDiversityRate', r.beamSearchDiversityRate, 0);
  optionalInteger('numReturnSequences', r.numReturnSequences, 1, INT32_MAX);
  optionalInteger('bestOf', r.bestOf, 1, INT32_MAX);
  for (const key of [
    'returnLogProbs',
    'returnContextLogits',
    'returnGenerationLogits',
    'returnPerfMetrics',
    'returnNumTokens',
    'excludeInputInOutput',
    'useDraftLogits',
  ] as const) {
    optionalBoolean(key, r[key]);
  }
  if (r.embeddingBias !== undefined) {
    const { words, weights } = r.embeddingBias;
    stringList('embeddingBias.words', words);
    if (!Array.isArray(weights) || weights.length !== words.length) {
      throw invalidArgument('embeddingBias.weights', weights, `needs one weight per word (${words.length})`);
    }
    weights.forEach((w, i) => {
      finite(`embeddingBias.weights[${i}]`, w);
    });
  }
  if (r.embeddingBiasVector !== undefined) {
    Array.from(r.embeddingBiasVector).forEach((w, i) => {
      finite(`embeddingBiasVector[${i}]`, w);
    });
  }
  matrix('promptEmbeddingTable', r.promptEmbeddingTable);
  matrix('draftLogits', r.draftLogits);
  optionalInteger('promptVocabSize', r.promptVocabSize, 0, INT32_MAX);
  if (r.promptTableExtraId !== undefined) uint64('promptTableExtraId', r.promptTableExtraId);
  if (r.lora !== undefined) {
    if (r.lora.taskId !== undefined) uint64('lora.taskId', r.lora.taskId);
    matrix('lora.weights', r.lora.weights);
    r.lora.config?.forEach((row, i) => {
      if (!Array.isArray(row) || row.length !== 3) {
        throw invalidArgument(`lora.config[${i}]`, row, 'must be [module_id, layer_idx, adapter_size]');
      }
      row.forEach((v, j) => {
        integer(`lora.config[${i}][${j}]`, v, INT32_MIN, INT32_MAX);
      });
    });
    optionalString('lora.name', r.lora.name);
    optionalString('lora.path', r.lora.path);
  }
  if (r.guidedDecoding !== undefined) {
    optionalString('guidedDecoding.type', r.guidedDecoding.type);
    if (r.guidedDecoding.type === undefined || r.guidedDecoding.type === '') {
      throw invalidArgument('guidedDecoding.type', r.guidedDecoding.type, 'is required');
    }
    optionalString('guidedDecoding.guide', r.guidedDecoding.guide);
  }
  optionalString('decoderTextInput', r.decoderTextInput);
  if (r.decoderInputIds !== undefined) idList('decoderInputIds', r.decoderInputIds);
  if (r.draftInputIds !== undefined) idList('draftInputIds', r.draftInputIds);
  optionalFinite('draftAcceptanceThreshold', r.draftAcceptanceThreshold, 0);
  optionalString('tensorrtLlmModelName', r.tensorrtLlmModelName);
  optionalString('draftModelName', r.draftModelName);
  optionalInteger('numDraftTokens', r.numDraftTokens, 0, INT32_MAX);
  if (r.requestId !== undefined) requestId(r.requestId);
  if (r.parameters !== undefined) {
    for (const [name, value] of Object.entries(r.parameters)) {
      if (name.startsWith('triton_')) {
        throw invalidArgument(
          `parameters.${name}`,
          value,
          "names starting with 'triton_' are reserved for Triton",
        );
      }
      if (!['boolean', 'number', 'string'].includes(typeof value)) {
        throw invalidArgument(`parameters.${name}`, value, 'must be a boolean, number or string');
      }
    }
  }
}

/** Request ids travel in gRPC metadata-free fields but also in logs; keep them printable and short. */
export function requestId(id: unknown): void {
  if (typeof id !== 'string' || id.length === 0 || id.length > 128 || !/^[\x21-\x7e]+$/.test(id)) {
    throw invalidArgument('requestId', id, 'must be 1-128 printable ASCII characters without spaces');
  }
}

function integer(field: string, value: unknown, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw invalidArgument(field, value, 'must be an integer');
  if (value < min || value > max) throw invalidArgument(field, value, `must be in [${min}, ${max}]`);
}

function optionalInteger(field: string, value: unknown, min: number, max: number): void {
  if (value !== undefined) integer(field, value, min, max);
}

function finite(field: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw invalidArgument(field, value, 'must be a finite number');
}

function optionalFinite(field: string, value: unknown, min?: number): void {
  if (value === undefined) return;
  finite(field, value);
  if (min !== undefined && (value as number) < min) throw invalidArgument(field, value, `must be >= ${min}`);
}

function optionalBoolean(field: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean')
    throw invalidArgument(field, value, 'must be a boolean');
}

function optionalString(field: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'string')
    throw invalidArgument(field, value, 'must be a string');
}

function uint64(field: string, value: unknown): void {
  if (typeof value === 'bigint') {
    if (value < 0n || value > UINT64_MAX) throw invalidArgument(field, value, 'must be in [0, 2^64-1]');
    return;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidArgument(field, value, 'must be a non-negative safe integer or a bigint');
  }
}

function stringList(field: string, value: unknown): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw invalidArgument(field, value, 'must be an array of strings');
  value.forEach((word, i) => {
    if (typeof word !== 'string' || word.length === 0) {
      throw invalidArgument(`${field}[${i}]`, word, 'must be a non-empty string');
    }
  });
}

function idList(field: string, value: unknown): void {
  if (!Array.isArray(value)) throw invalidArgument(field, value, 'must be an array of token ids');
  value.forEach((id, i) => {
    integer(`${field}[${i}]`, id, INT32_MIN, INT32_MAX);
  });
}

function wordIds(field: string, value: unknown): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw invalidArgument(field, value, 'must be an array of token-id arrays');
  value.forEach((word, i) => {
    idList(`${field}[${i}]`, word);
    if ((word as unknown[]).length === 0) throw invalidArgument(`${field}[${i}]`, word, 'must not be empty');
  });
}

function matrix(field: string, value: unknown): void {
  if (value === undefined) return;
  const m = value as { data?: unknown; shape?: unknown };
  const shape = m.shape;
  if (
    !Array.isArray(shape) ||
    shape.length !== 2 ||
    !shape.every((d) => typeof d === 'number' && Number.isInteger(d) && d > 0)
  ) {
    throw invalidArgument(`${field}.shape`, shape, 'must be [rows, columns] of positive integers');
  }
  const data = m.data;
  const length = data instanceof Float32Array || Array.isArray(data) ? data.length : -1;
  if (length !== shape[0] * shape[1]) {
    throw invalidArgument(`${field}.data`, length, `must hold ${shape[0] * shape[1]} values`);
  }
  if (Array.isArray(data))
    data.forEach((v, i) => {
      finite(`${field}.data[${i}]`, v);
    });
}

/**
 * The known key closest to a misspelt one (`maxToken`, `max_tokens`, `temprature`), or `undefined` when
 * none is close. Case, `_` and `-` are ignored, so the wire's snake_case names find their camelCase
 * option; otherwise at most one edit per four characters. Core has no dependencies, hence the few lines
 * of Levenshtein distance here.
 */
function nearestKey(key: string, known: Iterable<string>): string | undefined {
  const plain = (s: string) => s.toLowerCase().replace(/[_-]/g, '');
  const target = plain(key);
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(target.length / 4)) + 1;
  for (const candidate of known) {
    const distance = editDistance(target, plain(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
