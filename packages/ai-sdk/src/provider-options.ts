import { type GenerateRequest, type Matrix, TritonLlmError } from '@trtllm/sdk';
import { invalidArgument, REQUEST_OPTIONS, unknownOption, validateRequest } from '@trtllm/sdk/transport';

/** A request option's value as JSON carries it: numbers for bigints, arrays for typed arrays. */
type Json<T> = T extends bigint | Float32Array
  ? never
  : T extends object
    ? { readonly [K in keyof T]: Json<T[K]> }
    : T;

/**
 * A 2-D tensor as JSON: row-major values and `[rows, columns]`.
 *
 * @interface
 */
export type TritonJsonMatrix = Json<Matrix>;

/**
 * `GenerateRequest` options that are not provider options, and why: the AI SDK gives them through
 * its own call settings, or its result has no place for what they ask.
 */
const NOT_PROVIDER_OPTIONS = {
  prompt: 'the prompt comes from the messages',
  inputIds: 'the prompt comes from the messages',
  maxTokens: "set the AI SDK's maxOutputTokens instead",
  temperature: "set the AI SDK's temperature instead",
  topP: "set the AI SDK's topP instead",
  topK: "set the AI SDK's topK instead",
  presencePenalty: "set the AI SDK's presencePenalty instead",
  frequencyPenalty: "set the AI SDK's frequencyPenalty instead",
  seed: "set the AI SDK's seed instead",
  returnContextLogits: 'the AI SDK result has no place for logits',
  returnGenerationLogits: 'the AI SDK result has no place for logits',
  returnNumTokens: 'token counts are always asked for (the result usage)',
} as const satisfies Partial<Record<keyof GenerateRequest, string>>;

type ProviderOptionName = Exclude<keyof GenerateRequest, keyof typeof NOT_PROVIDER_OPTIONS>;

/** The request options of {@link TritonProviderOptions}, as the SDK takes them. */
export type TritonRequestOptions = Pick<GenerateRequest, ProviderOptionName>;

/** Call options carried in the provider options, beside the request options (a type, as JSON needs). */
export type TritonCallSettings = {
  /** Deadline of the whole request in milliseconds (a gRPC deadline). */
  readonly timeoutMs?: number;
  /** Longest wait for the next response in milliseconds. */
  readonly idleTimeoutMs?: number;
};

/**
 * TensorRT-LLM options of one call, given as `providerOptions.trtllm` (or as the provider's
 * `defaults`): every `@trtllm/sdk` request option (`GenerateRequest`, described in its
 * `REQUEST_OPTIONS`) as JSON carries it, with the same names and meanings, plus `timeoutMs` and
 * `idleTimeoutMs`. The AI SDK's own settings (`maxOutputTokens`, `temperature`, `topP`, `topK`,
 * `presencePenalty`, `frequencyPenalty`, `seed`, `stopSequences`, `responseFormat`) are given as
 * usual and are not repeated here; `stopWords` are added to `stopSequences`, and a JSON
 * `responseFormat` sets `guidedDecoding` for you. Every sequence of a beam search or of
 * `numReturnSequences` (the first is the text), with its log probs under `returnLogProbs`, is in
 * `providerMetadata.trtllm.sequences`; `returnPerfMetrics` fills `providerMetadata.trtllm.perfMetrics`.
 * An option the deployed model lacks is refused before anything is sent, naming the option and the
 * model; unknown keys and bad values are refused naming the field (`err.field`). (A type rather
 * than an interface, so that a variable of this type is assignable to the AI SDK's JSON-valued
 * `providerOptions`.)
 *
 * ```ts
 * await generateText({
 *   model: triton('ensemble'),
 *   prompt,
 *   providerOptions: { trtllm: { beamWidth: 2, badWords: ['ugly'] } satisfies TritonProviderOptions },
 * });
 * ```
 *
 * @interface
 */
export type TritonProviderOptions = Json<TritonRequestOptions> & TritonCallSettings;

const REQUEST_OPTION_KEYS: ReadonlySet<string> = new Set(
  Object.keys(REQUEST_OPTIONS).filter((key) => !Object.hasOwn(NOT_PROVIDER_OPTIONS, key)),
);

const CALL_KEYS: ReadonlySet<string> = new Set<keyof TritonCallSettings>(['timeoutMs', 'idleTimeoutMs']);

/** The AI SDK's names of the settings the SDK's checks name otherwise. */
const SETTING_NAMES: Readonly<Record<string, string>> = {
  maxTokens: 'maxOutputTokens',
  stopWords: 'stopSequences',
};

/**
 * Reads and checks `providerOptions.trtllm` (or the provider's defaults, named by `field`): every
 * key must be a known option and every value must pass the SDK's own request validation, whose
 * error is re-thrown naming the field under `field`.
 */
export function parseTritonOptions(
  value: unknown,
  field: string,
): { readonly request: TritonRequestOptions; readonly call: TritonCallSettings } {
  if (value === undefined || value === null) return { request: {}, call: {} };
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalidArgument(field, value, 'must be an object');
  const request: Record<string, unknown> = {};
  const call: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    if (REQUEST_OPTION_KEYS.has(key)) request[key] = v;
    else if (CALL_KEYS.has(key)) {
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
        throw invalidArgument(`${field}.${key}`, v, 'must be a positive number of milliseconds');
      }
      call[key] = v;
    } else if (Object.hasOwn(NOT_PROVIDER_OPTIONS, key)) {
      const why = NOT_PROVIDER_OPTIONS[key as keyof typeof NOT_PROVIDER_OPTIONS];
      throw invalidArgument(`${field}.${key}`, v, `is not a provider option: ${why}`);
    } else {
      throw unknownOption(`${field}.${key}`, v, [...REQUEST_OPTION_KEYS, ...CALL_KEYS]);
    }
  }
  // The SDK validates whole requests; a placeholder prompt and length make this one whole.
  checkRequest({ prompt: '-', maxTokens: 1, ...request } as GenerateRequest, (name) => `${field}.${name}`);
  return { request: request as TritonRequestOptions, call: call as TritonCallSettings };
}

/**
 * Runs the SDK's request validation on the request built from the AI SDK's settings, and names a
 * failing field as the caller spelt it (`maxOutputTokens`, not `maxTokens`).
 */
export function checkRequest(
  request: GenerateRequest,
  rename: (name: string) => string = (name) => {
    const root = name.split(/[.[]/)[0] ?? name;
    const setting = SETTING_NAMES[root];
    return setting !== undefined ? `${setting}${name.slice(root.length)}` : name;
  },
): void {
  try {
    validateRequest(request);
  } catch (err) {
    if (!(err instanceof TritonLlmError) || err.field === undefined) throw err;
    const field = rename(err.field);
    if (field === err.field) throw err;
    const message = err.message.startsWith(err.field)
      ? `${field}${err.message.slice(err.field.length)}`
      : err.message;
    throw new TritonLlmError('invalid_argument', message, { field, cause: err });
  }
}
