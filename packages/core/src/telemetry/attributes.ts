import type { GenerateRequest } from '../request/request.js';
import type { TelemetryAttributes } from './api.js';

// Names from the OpenTelemetry GenAI semantic conventions (semantic-conventions-genai, built on
// semconv v1.42): `gen_ai.provider.name` replaced `gen_ai.system` there, and the streaming client
// metrics are `time_to_first_chunk` / `time_per_output_chunk`.
export const PROVIDER = 'triton';
/** The attributes every span and metric point of one client shares. */
export function baseAttributes(
  model: string,
  operation: string,
  serverUrl: string | undefined,
): TelemetryAttributes {
  const attributes: TelemetryAttributes = {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': PROVIDER,
    'gen_ai.request.model': model,
  };
  if (serverUrl !== undefined) {
    const url = new URL(serverUrl);
    attributes['server.address'] = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    attributes['server.port'] = port;
  }
  return attributes;
}

/** The request's sampling settings under their convention names, only where the request set them. */
export function requestAttributes(request: GenerateRequest, streaming: boolean): TelemetryAttributes {
  const attributes: TelemetryAttributes = {
    'gen_ai.request.max_tokens': request.maxTokens,
    'trtllm.request.streaming': streaming,
  };
  if (request.temperature !== undefined) attributes['gen_ai.request.temperature'] = request.temperature;
  if (request.topP !== undefined) attributes['gen_ai.request.top_p'] = request.topP;
  if (request.topK !== undefined) attributes['gen_ai.request.top_k'] = request.topK;
  if (request.presencePenalty !== undefined)
    attributes['gen_ai.request.presence_penalty'] = request.presencePenalty;
  if (request.frequencyPenalty !== undefined)
    attributes['gen_ai.request.frequency_penalty'] = request.frequencyPenalty;
  // Attributes hold no bigints: a seed past 2^53 would be rounded, so it is left out instead.
  const seed = typeof request.seed === 'bigint' ? toSafeNumber(request.seed) : request.seed;
  if (seed !== undefined) attributes['gen_ai.request.seed'] = seed;
  if (request.stopWords !== undefined && request.stopWords.length > 0)
    attributes['gen_ai.request.stop_sequences'] = [...request.stopWords];
  const choices = request.numReturnSequences ?? request.beamWidth;
  if (choices !== undefined && choices !== 1) attributes['gen_ai.request.choice.count'] = choices;
  if (request.beamWidth !== undefined) attributes['trtllm.request.beam_width'] = request.beamWidth;
  return attributes;
}

function toSafeNumber(value: bigint): number | undefined {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
    ? Number(value)
    : undefined;
}
