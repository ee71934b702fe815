import type { InferRequest, InferResponse } from '@trtllm/sdk';
import type { JsonStrings, Send, StreamMessages } from '../call/index.js';
import type { ErrorContext } from '../errors.js';
import { generateRequestJson } from './generate-request.js';
import {
  generateResponse,
  type RequestIdentity,
  requestIdentity,
  type WantedOutputs,
  wantedOutputs,
} from './generate-response.js';
import { modelPath } from './paths.js';

// One list for every stream request: the client keeps one Headers object for it (see HttpClient).
const STREAM_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['content-type', 'application/json'],
  ['accept', 'text/event-stream'],
];

/**
 * A `/generate_stream` request and how its events map to core's responses. It holds the request
 * only until the stream sends it: a waiting stream keeps its identity, not its inputs.
 */
export class GenerateStream implements StreamMessages {
  readonly identity: RequestIdentity;
  private readonly wanted: WantedOutputs | undefined;
  private request: InferRequest | undefined;

  constructor(request: InferRequest) {
    this.request = request;
    this.identity = requestIdentity(request);
    this.wanted = wantedOutputs(request);
  }

  encode(): { send: Send; context: ErrorContext } {
    const request = this.request as InferRequest;
    this.request = undefined;
    const path = `${modelPath(request.model, request.modelVersion)}/generate_stream`;
    return {
      send: { method: 'POST', path, body: generateRequestJson(request), headers: STREAM_HEADERS },
      context: { what: `POST ${path}`, requestId: request.id, model: request.model },
    };
  }

  response(json: unknown, strings: JsonStrings, context: ErrorContext): InferResponse {
    return generateResponse(json, this.identity, false, context, this.wanted, strings);
  }

  stop(request: InferRequest): StreamMessages {
    return new GenerateStream(request);
  }
}
