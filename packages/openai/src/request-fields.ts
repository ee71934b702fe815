import { TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import { nearestName } from './nearest.js';
import { type Body, refuseNonEmpty } from './params.js';

/** Which body fields an endpoint reads, and which it accepts knowing they change nothing here. */
export interface EndpointFields {
  /** Read and honoured (or refused with a reason when set to what the backend cannot do). */
  readonly read: readonly string[];
  /**
   * OpenAI's bookkeeping and latency hints: they change nothing in what a model generates, so a
   * client that always sends them (`user`, `store`, `metadata`) works unchanged.
   */
  readonly noEffect: readonly string[];
  /** Both lists, for the check every request makes. */
  readonly known: ReadonlySet<string>;
}

function endpointFields(read: readonly string[], noEffect: readonly string[]): EndpointFields {
  return { read, noEffect, known: new Set([...read, ...noEffect]) };
}

const SHARED = [
  'model',
  'n',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'seed',
  'stop',
  'logit_bias',
  'logprobs',
  'max_tokens',
] as const;

/** `/v1/chat/completions`: every field of OpenAI's Chat Completions request. */
export const CHAT_FIELDS: EndpointFields = endpointFields(
  [
    ...SHARED,
    'messages',
    'max_completion_tokens',
    'top_logprobs',
    'tools',
    'tool_choice',
    'parallel_tool_calls',
    'response_format',
    'functions',
    'function_call',
    'modalities',
    'audio',
    'reasoning_effort',
    'verbosity',
    'web_search_options',
    'moderation',
  ],
  [
    'user',
    'metadata',
    'store',
    'service_tier',
    'safety_identifier',
    'prompt_cache_key',
    'prompt_cache_retention',
    'prompt_cache_options',
    'prediction',
  ],
);

/** `/v1/completions`: every field of OpenAI's legacy Completions request. */
export const COMPLETION_FIELDS: EndpointFields = endpointFields(
  [...SHARED, 'prompt', 'best_of', 'echo', 'suffix'],
  ['user'],
);

/**
 * Refuses a body with a field the endpoint does not know, as OpenAI's API does (400 "Unrecognized
 * request argument supplied: max_token"): a misspelt parameter silently dropped would run with
 * the default instead (issue 53), so the closest known name is suggested.
 */
export function refuseUnknownFields(body: Body, fields: EndpointFields): void {
  const { known } = fields;
  // A loop, not Object.keys().filter(): every request passes here and almost none fails.
  let unknown: string[] | undefined;
  for (const key in body) {
    if (known.has(key)) continue;
    unknown ??= [];
    unknown.push(key);
  }
  if (unknown === undefined) return;
  const named = unknown.map((k) => {
    const near = nearestName(k, known);
    return near === undefined ? k : `${k} (did you mean ${near}?)`;
  });
  throw new TritonLlmError(
    'invalid_argument',
    `Unrecognized request argument${unknown.length > 1 ? 's' : ''} supplied: ${named.join(', ')}`,
    { field: unknown[0]! },
  );
}

/** Chat fields OpenAI has for what this backend does not do: accepted only when they ask for nothing. */
export function refuseUnsupportedChatFields(body: Body): void {
  const modalities = body.modalities;
  if (modalities !== undefined && modalities !== null) {
    if (!Array.isArray(modalities) || modalities.some((m) => m !== 'text')) {
      throw invalidArgument('modalities', modalities, 'only ["text"] is supported (no audio output)');
    }
  }
  refuseNonEmpty(body, 'audio', 'is not supported (no audio output)');
  refuseNonEmpty(body, 'reasoning_effort', 'is not supported (no reasoning-effort control on this backend)');
  refuseNonEmpty(body, 'verbosity', 'is not supported (no verbosity control on this backend)');
  refuseNonEmpty(body, 'web_search_options', 'is not supported (no web search)');
  refuseNonEmpty(body, 'moderation', 'is not supported (no moderation on this backend)');
}
