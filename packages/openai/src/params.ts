import type { GenerateRequest } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';

/** A JSON request body. */
export type Body = Readonly<Record<string, unknown>>;

/** The generation options shared by `/v1/completions` and `/v1/chat/completions`, in SDK terms. */
export type SamplingRequest = Omit<GenerateRequest, 'prompt' | 'inputIds' | 'requestId'>;

/** What both endpoints read from a body besides the prompt. */
export interface CommonParams {
  readonly model: string;
  readonly n: number;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly sampling: SamplingRequest;
}

// OpenAI's own bounds, so clients get the errors they would get from OpenAI.
const MAX_N = 128;
const MAX_STOPS = 4;

export function optionalNumber(body: Body, name: string, min: number, max: number): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw invalidArgument(name, value, 'must be a number');
  if (value < min || value > max) throw invalidArgument(name, value, `must be in [${min}, ${max}]`);
  return value;
}

export function optionalInteger(body: Body, name: string, min: number, max: number): number | undefined {
  const value = optionalNumber(body, name, min, max);
  if (value !== undefined && !Number.isInteger(value))
    throw invalidArgument(name, value, 'must be an integer');
  return value;
}

export function optionalBoolean(body: Body, name: string): boolean | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidArgument(name, value, 'must be a boolean');
  return value;
}

/** Refuses a parameter whose meaning the backend cannot honour, rather than silently ignoring it. */
export function refuseNonEmpty(body: Body, name: string, why: string): void {
  const value = body[name];
  if (value === undefined || value === null || value === '') return;
  if (Array.isArray(value) && value.length === 0) return;
  if (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) return;
  throw invalidArgument(name, value, why);
}

function stopList(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list)) throw invalidArgument('stop', value, 'must be a string or an array of strings');
  if (list.length > MAX_STOPS) throw invalidArgument('stop', value, `must have at most ${MAX_STOPS} entries`);
  list.forEach((s, i) => {
    if (typeof s !== 'string' || s.length === 0)
      throw invalidArgument(`stop[${i}]`, s, 'must be a non-empty string');
  });
  return list.length > 0 ? (list as string[]) : undefined;
}

function includeUsage(body: Body, stream: boolean): boolean {
  const options = body.stream_options;
  if (options === undefined || options === null) return false;
  if (!stream) throw invalidArgument('stream_options', options, 'is only allowed when stream is true');
  if (typeof options !== 'object' || Array.isArray(options))
    throw invalidArgument('stream_options', options, 'must be an object');
  const value = (options as Record<string, unknown>).include_usage;
  if (value !== undefined && value !== null && typeof value !== 'boolean') {
    throw invalidArgument('stream_options.include_usage', value, 'must be a boolean');
  }
  return value === true;
}

/**
 * Reads the parameters both endpoints share. `maxTokens` is the caller's: the endpoints name it
 * differently and default it differently.
 */
export function commonParams(body: Body, maxTokens: number): CommonParams {
  const model = body.model;
  if (typeof model !== 'string' || model.length === 0)
    throw invalidArgument('model', model, 'must be a non-empty string');
  const stream = optionalBoolean(body, 'stream') ?? false;
  const temperature = optionalNumber(body, 'temperature', 0, 2);
  const topP = optionalNumber(body, 'top_p', 0, 1);
  if (topP === 0)
    throw invalidArgument('top_p', topP, 'must be greater than 0 (use temperature 0 for greedy decoding)');
  const presencePenalty = optionalNumber(body, 'presence_penalty', -2, 2);
  const frequencyPenalty = optionalNumber(body, 'frequency_penalty', -2, 2);
  const seed = optionalInteger(body, 'seed', 0, Number.MAX_SAFE_INTEGER);
  const stopWords = stopList(body.stop);
  refuseNonEmpty(body, 'logit_bias', 'is not supported by TensorRT-LLM models served through Triton');
  const sampling: SamplingRequest = {
    maxTokens,
    // OpenAI's temperature 0 means greedy; TensorRT-LLM spells that top_k 1.
    ...(temperature === 0 ? { topK: 1 } : temperature !== undefined ? { temperature } : {}),
    ...(topP !== undefined ? { topP } : {}),
    ...(presencePenalty !== undefined ? { presencePenalty } : {}),
    ...(frequencyPenalty !== undefined ? { frequencyPenalty } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(stopWords !== undefined ? { stopWords } : {}),
  };
  return {
    model,
    n: optionalInteger(body, 'n', 1, MAX_N) ?? 1,
    stream,
    includeUsage: includeUsage(body, stream),
    sampling,
  };
}
