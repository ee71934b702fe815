import type { GenerateRequest } from '@trtllm/sdk';
import { invalidArgument, REQUEST_OPTIONS, validateRequest } from '@trtllm/sdk/transport';

/** Generated tokens when neither the model's defaults nor the call say how many. */
export const DEFAULT_MAX_TOKENS = 256;

/**
 * `GenerateRequest` options that are not generation settings of {@link ChatTriton}: the messages
 * make the prompt, the request id is a per-call transport option, and LangChain's messages have no
 * place for logits (token counts are always asked for, for `usage_metadata`).
 */
const NOT_SETTINGS = new Set([
  'prompt',
  'inputIds',
  'requestId',
  'returnContextLogits',
  'returnGenerationLogits',
  'returnNumTokens',
] as const satisfies readonly (keyof GenerateRequest)[]);

type NotSetting = typeof NOT_SETTINGS extends Set<infer K> ? K : never;

/**
 * The generation options of {@link ChatTriton}, as model defaults (constructor) or per call (call
 * options win key by key). They are the SDK's own request options (`@trtllm/sdk` `GenerateRequest`,
 * described in its `REQUEST_OPTIONS`), mapped by the SDK onto whatever inputs the deployed model
 * declares; an option the model lacks is refused before anything is sent. `stop` is LangChain's name
 * for stop strings and joins `stopWords`.
 */
export interface TritonGenerationSettings extends Omit<GenerateRequest, NotSetting | 'maxTokens'> {
  /** Upper bound on generated tokens (default 256). */
  readonly maxTokens?: number;
  /** Stop strings (LangChain's standard option): enforced on the client across chunks, and sent where the model takes them. */
  readonly stop?: readonly string[];
}

/** Every settings key, so the model can pick its settings out of LangChain's wider option objects. */
export const SETTING_KEYS = [
  ...Object.keys(REQUEST_OPTIONS).filter((key) => !NOT_SETTINGS.has(key as NotSetting)),
  'stop',
] as (keyof TritonGenerationSettings)[];

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The settings found in `source` (constructor fields or call options), undefined ones left out. */
export function pickSettings(source: object | undefined): TritonGenerationSettings {
  const out: Mutable<TritonGenerationSettings> = {};
  if (source === undefined || source === null) return out;
  const record = source as Record<string, unknown>;
  for (const key of SETTING_KEYS) {
    if (record[key] !== undefined) (out as Record<string, unknown>)[key] = record[key];
  }
  return out;
}

/**
 * The request options of `settings` for `prompt`: call settings over model defaults, `stop` joined to
 * `stopWords`. Every value is checked (the SDK's own validation, which names field and value), so
 * bad input fails here, before any request is sent.
 */
export function requestFor(prompt: string, settings: TritonGenerationSettings): GenerateRequest {
  const { stop, maxTokens, ...rest } = settings;
  if (stop !== undefined) {
    if (!Array.isArray(stop) || stop.some((s) => typeof s !== 'string' || s.length === 0)) {
      throw invalidArgument('stop', stop, 'must be an array of non-empty strings');
    }
  }
  // A malformed stopWords is passed on as given, so the SDK's check names it.
  const stopWords =
    stop === undefined || (rest.stopWords !== undefined && !Array.isArray(rest.stopWords))
      ? rest.stopWords
      : [...new Set([...(rest.stopWords ?? []), ...stop])];
  const request: GenerateRequest = {
    ...rest,
    prompt,
    maxTokens: maxTokens ?? DEFAULT_MAX_TOKENS,
    ...(stopWords !== undefined ? { stopWords } : {}),
  };
  validateRequest(request);
  return request;
}

/** Model defaults with a call's settings over them, key by key. */
export function mergeSettings(
  defaults: TritonGenerationSettings,
  call: TritonGenerationSettings,
): TritonGenerationSettings {
  return { ...defaults, ...call };
}
