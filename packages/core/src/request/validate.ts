import { invalidArgument, type TritonLlmError } from '../errors.js';
import { REQUEST_OPTIONS, type RequestOption } from './options.js';
import type { GenerateRequest } from './request.js';

type Described = Readonly<Record<string, RequestOption>>;

const INT32 = { min: -2147483648, max: 2147483647 } as const;
const UINT64_MAX = (1n << 64n) - 1n;
const OPTIONS: Described = REQUEST_OPTIONS;

/**
 * Checks a request before any I/O, against {@link REQUEST_OPTIONS}: every problem is a
 * `TritonLlmError` with code `invalid_argument` whose `field` names the option and whose message
 * names it and the value. Checks that depend on the deployed model (is the option supported?)
 * happen later, in the schema mapping.
 */
export function validateRequest(request: GenerateRequest): void {
  if (request === null || typeof request !== 'object')
    throw invalidArgument('request', request, 'must be an object');
  checkFields('', request, OPTIONS);
  const r = request;
  if (r.prompt === undefined && r.inputIds === undefined) {
    throw invalidArgument('prompt', undefined, 'a prompt (or inputIds for the raw model) is required');
  }
  if (r.prompt !== undefined && r.inputIds !== undefined) {
    throw invalidArgument('inputIds', r.inputIds, 'give either prompt or inputIds, not both');
  }
  const retention = r.kvCacheRetention;
  if (
    retention?.tokenRangeDurationsMs !== undefined &&
    retention.tokenRangeDurationsMs.length !== (retention.tokenRanges?.length ?? 0)
  ) {
    throw invalidArgument(
      'kvCacheRetention.tokenRangeDurationsMs',
      retention.tokenRangeDurationsMs,
      `needs one duration per token range (${retention.tokenRanges?.length ?? 0})`,
    );
  }
  for (const [i, [start, end, priority]] of (retention?.tokenRanges ?? []).entries()) {
    if (start < 0 || end <= start || priority < 0 || priority > 100)
      throw invalidArgument(
        `kvCacheRetention.tokenRanges[${i}]`,
        [start, end, priority],
        'must be [start, end, priority] with 0 <= start < end and priority in [0, 100]',
      );
  }
  if (r.embeddingBias !== undefined && r.embeddingBias.weights.length !== r.embeddingBias.words.length) {
    throw invalidArgument(
      'embeddingBias.weights',
      r.embeddingBias.weights,
      `needs one weight per word (${r.embeddingBias.words.length})`,
    );
  }
}

/** The check of `requestId`, for ids given outside a request. */
export function requestId(id: unknown): void {
  checkValue('requestId', id, REQUEST_OPTIONS.requestId);
}

/**
 * The error for a key that is not among `known` (`maxToken`, `max_tokens`, `temprature`): it
 * suggests the closest known key where one is close. `field` is the key's whole path; its last
 * name is compared, ignoring case, `_` and `-`, so the wire's snake_case names find their
 * camelCase option.
 */
export function unknownOption(field: string, value: unknown, known: Iterable<string>): TritonLlmError {
  const near = nearestKey(field.slice(field.lastIndexOf('.') + 1), known);
  return invalidArgument(
    field,
    value,
    near === undefined ? 'unknown option' : `unknown option; did you mean ${near}?`,
  );
}

/**
 * Refuses a key of an options object that `known` does not have, as {@link unknownOption} words it
 * (`baseURL: unknown option; did you mean baseUrl?`): the constructors and transports check their
 * options with it, as requests are checked. `known` is a record whose keys are the option names
 * (typed `Record<keyof Options, true>` at the caller, so a new option cannot be forgotten here);
 * `prefix` is the path of a nested object (`defaults.`).
 */
export function checkOptionNames(
  options: object,
  known: Readonly<Record<string, unknown>>,
  prefix = '',
): void {
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(known, key))
      throw unknownOption(prefix + key, (options as Record<string, unknown>)[key], Object.keys(known));
  }
}

/** A described object's options by name and its required ones, made once per table. */
interface Fields {
  readonly byName: ReadonlyMap<string, RequestOption>;
  readonly required: readonly string[];
}

const FIELDS = new WeakMap<Described, Fields>();

function fieldsOf(described: Described): Fields {
  let fields = FIELDS.get(described);
  if (fields === undefined) {
    const byName = new Map(Object.entries(described));
    const required = [...byName].filter(([, option]) => option.required === true).map(([name]) => name);
    fields = { byName, required };
    FIELDS.set(described, fields);
  }
  return fields;
}

/**
 * Every key of `value` is described in `described` and every value passes its check; described
 * keys that are required are present. Plain JavaScript callers get no compile-time check, and a
 * misspelt option silently ignored would change what is generated.
 */
function checkFields(prefix: string, value: object, described: Described): void {
  const { byName, required } = fieldsOf(described);
  const record = value as Readonly<Record<string, unknown>>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const v = record[key];
    const option = byName.get(key);
    if (option === undefined) throw unknownOption(prefix + key, v, byName.keys());
    if (v !== undefined) checkValue(prefix + key, v, option);
  }
  for (const key of required) {
    // The type's own message says what is missing ("must be an integer (got undefined)").
    if (record[key] === undefined) checkValue(prefix + key, undefined, byName.get(key) as RequestOption);
  }
}

function checkValue(field: string, value: unknown, option: RequestOption): void {
  switch (option.type) {
    case 'boolean':
      if (typeof value !== 'boolean') throw invalidArgument(field, value, 'must be a boolean');
      return;
    case 'string':
      if (typeof value !== 'string') throw invalidArgument(field, value, 'must be a string');
      if (option.nonEmpty === true && value.length === 0)
        throw invalidArgument(field, value, 'must not be empty');
      if (option.pattern !== undefined && !option.pattern.test(value))
        throw invalidArgument(field, value, `must be ${option.patternRule}`);
      return;
    case 'integer':
      integer(field, value, option.min ?? INT32.min, option.max ?? INT32.max);
      return;
    case 'number':
      number(field, value, option);
      return;
    case 'uint64':
      uint64(field, value);
      return;
    case 'strings':
      if (!Array.isArray(value)) throw invalidArgument(field, value, 'must be an array of strings');
      value.forEach((word, i) => {
        if (typeof word !== 'string' || word.length === 0) {
          throw invalidArgument(`${field}[${i}]`, word, 'must be a non-empty string');
        }
      });
      return;
    case 'numbers':
      if (!Array.isArray(value) && !(value instanceof Float32Array))
        throw invalidArgument(field, value, 'must be an array of numbers');
      for (let i = 0; i < value.length; i++) finite(`${field}[${i}]`, value[i]);
      return;
    case 'tokenIds':
      idList(field, value);
      if (option.nonEmpty === true && (value as unknown[]).length === 0)
        throw invalidArgument(field, value, 'must not be empty');
      return;
    case 'tokenIdLists':
      if (!Array.isArray(value)) throw invalidArgument(field, value, 'must be an array of token-id arrays');
      value.forEach((word, i) => {
        idList(`${field}[${i}]`, word);
        if ((word as unknown[]).length === 0)
          throw invalidArgument(`${field}[${i}]`, word, 'must not be empty');
      });
      return;
    case 'matrix':
      matrix(field, value);
      return;
    case 'rows':
      rows(field, value, option.columns ?? []);
      return;
    case 'object':
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw invalidArgument(field, value, 'must be an object');
      checkFields(`${field}.`, value, option.fields ?? {});
      return;
    case 'parameters':
      parameters(field, value, option.reservedPrefix);
      return;
    case 'images':
      images(field, value);
      return;
  }
}

const HTTP_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/i;
const DATA_URL = /^data:[\w.+-]+\/[\w.+-]+(;[^,;]+)*;base64,[A-Za-z0-9+/]+={0,2}$/i;
const MEDIA_TYPE = /^image\/[\w.+-]+$/i;
const IMAGE_KEYS: ReadonlySet<string> = new Set(['url', 'data', 'mediaType']);

/**
 * A list of images, each a URL (http(s), or a base64 `data:` URI, as the models' loaders read
 * them) or non-empty bytes with an image media type. An image the server cannot load fails the
 * whole request there, after the queue: it is refused here instead.
 */
function images(field: string, value: unknown): void {
  if (!Array.isArray(value))
    throw invalidArgument(field, value, 'must be an array of { url } or { data, mediaType } images');
  value.forEach((image: unknown, i) => {
    const at = `${field}[${i}]`;
    if (typeof image !== 'object' || image === null || Array.isArray(image))
      throw invalidArgument(at, image, 'must be { url } or { data, mediaType }');
    const record = image as Readonly<Record<string, unknown>>;
    for (const key of Object.keys(record)) {
      if (!IMAGE_KEYS.has(key)) throw unknownOption(`${at}.${key}`, record[key], IMAGE_KEYS);
    }
    const { url, data, mediaType } = record;
    if (url !== undefined) {
      if (data !== undefined || mediaType !== undefined)
        throw invalidArgument(at, image, 'give url, or data with mediaType, not both');
      if (typeof url !== 'string') throw invalidArgument(`${at}.url`, url, 'must be a string');
      if (!HTTP_URL.test(url) && !DATA_URL.test(url))
        throw invalidArgument(
          `${at}.url`,
          url,
          'must be an http(s) URL or a base64 data: URI (data:image/png;base64,...)',
        );
      return;
    }
    if (!(data instanceof Uint8Array))
      throw invalidArgument(`${at}.data`, data, 'must be a Uint8Array of the image file (or give url)');
    if (data.byteLength === 0) throw invalidArgument(`${at}.data`, '0 bytes', 'must not be empty');
    if (typeof mediaType !== 'string' || !MEDIA_TYPE.test(mediaType))
      throw invalidArgument(
        `${at}.mediaType`,
        mediaType,
        'must be an image media type (image/png, image/jpeg...)',
      );
  });
}

function integer(field: string, value: unknown, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw invalidArgument(field, value, 'must be an integer');
  if (value < min || value > max) throw invalidArgument(field, value, `must be in [${min}, ${max}]`);
}

function finite(field: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw invalidArgument(field, value, 'must be a finite number');
}

function number(field: string, value: unknown, { min, max, minExclusive }: RequestOption): void {
  finite(field, value);
  const v = value as number;
  const open = minExclusive === true;
  if ((min === undefined || (open ? v > min : v >= min)) && (max === undefined || v <= max)) return;
  const why =
    max === undefined
      ? `must be ${open ? '>' : '>='} ${min}`
      : `must be in ${open ? '(' : '['}${min ?? '-Infinity'}, ${max}]`;
  throw invalidArgument(field, value, why);
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

function idList(field: string, value: unknown): void {
  if (!Array.isArray(value)) throw invalidArgument(field, value, 'must be an array of token ids');
  value.forEach((id, i) => {
    integer(`${field}[${i}]`, id, INT32.min, INT32.max);
  });
}

function matrix(field: string, value: unknown): void {
  if (typeof value !== 'object' || value === null)
    throw invalidArgument(field, value, 'must be an object of data and shape [rows, columns]');
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

function rows(field: string, value: unknown, columns: readonly string[]): void {
  if (!Array.isArray(value))
    throw invalidArgument(field, value, `must be an array of [${columns.join(', ')}]`);
  value.forEach((row, i) => {
    if (!Array.isArray(row) || row.length !== columns.length) {
      throw invalidArgument(`${field}[${i}]`, row, `must be [${columns.join(', ')}]`);
    }
    row.forEach((v, j) => {
      integer(`${field}[${i}][${j}]`, v, INT32.min, INT32.max);
    });
  });
}

function parameters(field: string, value: unknown, reservedPrefix: string | undefined): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidArgument(field, value, 'must be an object of boolean, number or string values');
  for (const [name, v] of Object.entries(value)) {
    if (reservedPrefix !== undefined && name.startsWith(reservedPrefix)) {
      throw invalidArgument(
        `${field}.${name}`,
        v,
        `names starting with '${reservedPrefix}' are reserved for Triton`,
      );
    }
    if (!['boolean', 'number', 'string'].includes(typeof v)) {
      throw invalidArgument(`${field}.${name}`, v, 'must be a boolean, number or string');
    }
  }
}

/**
 * The known key closest to `key`, or `undefined` when none is close: case, `_` and `-` are
 * ignored, otherwise at most one edit per four characters, two swapped neighbours counting as one
 * (`modle` → `model`). Core has no dependencies, hence the few lines of edit distance here.
 */
export function nearestKey(key: string, known: Iterable<string>): string | undefined {
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

/** Levenshtein distance with adjacent transpositions (optimal string alignment). */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      let best = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, (before[j - 2] ?? 0) + 1);
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? 0;
}
