import {
  type CallOptions,
  type InferRequest,
  type InferResponse,
  type InferStream,
  TritonLlmError,
} from '@trtllm/sdk';
import { describeText, readText } from './body.js';
import type { Call } from './call.js';
import { ERROR_BODY_LIMIT, type HttpClient, type Send, withoutRetryPlan } from './client.js';
import { type ErrorContext, errorFromHttp, protocolError } from './errors.js';
import { generateRequestJson } from './generate-request.js';
import {
  errorField,
  generateResponse,
  type RequestIdentity,
  requestIdentity,
  type WantedOutputs,
  wantedOutputs,
} from './generate-response.js';
import { modelPath } from './paths.js';
import { sseData } from './sse-events.js';

/**
 * A `/generate_stream` call. Each SSE event is yielded as soon as it arrives, with `final`
 * false; when the server ends the body cleanly one more response follows, with no outputs and
 * `final` true: an SSE stream only says it is over by closing, and waiting for the next event
 * before handing one out would delay every token. (gRPC with `triton_enable_empty_final_response`
 * ends the same way.) The request goes out when iteration starts.
 */
export function openStream(
  client: HttpClient,
  request: InferRequest,
  options: CallOptions | undefined,
): InferStream {
  let iterated = false;
  // The closures below see neither `request` nor `options`: an open stream keeps only the request's
  // identity, and for a stop request the options without the retry plan.
  const pending = new PendingCall(request, options);
  const kept = withoutRetryPlan(options);
  return {
    [Symbol.asyncIterator]() {
      if (iterated) {
        throw new TritonLlmError('failed_precondition', 'an InferStream can be iterated only once');
      }
      iterated = true;
      return responses(client, pending);
    },
    sendStop: (stop) => sendStop(client, stop, kept),
  };
}

/**
 * What a stream needs to send its request, handed over once: a generator keeps its arguments
 * for its whole life, so the request, its encoded body and the call's options live here, and
 * are let go as soon as they are used.
 */
class PendingCall {
  readonly identity: RequestIdentity;
  readonly wanted: WantedOutputs | undefined;
  private request: InferRequest | undefined;
  private options: CallOptions | undefined;

  constructor(request: InferRequest, options: CallOptions | undefined) {
    this.request = request;
    this.options = options;
    this.identity = requestIdentity(request);
    this.wanted = wantedOutputs(request);
  }

  /** Encodes and sends the request (once); a request that cannot be encoded fails here. */
  async open(client: HttpClient): Promise<{ response: Response; call: Call; context: ErrorContext }> {
    const { send, context } = streamSend(this.request!);
    const options = this.options;
    this.request = undefined;
    this.options = undefined;
    const call = client.begin(options, context);
    try {
      return { response: await client.send(call, send, options), call, context };
    } catch (err) {
      // As for a failure later in the stream: the call is aborted, then let go.
      call.abort('cancelled');
      call.finish();
      throw err;
    }
  }
}

async function* responses(
  client: HttpClient,
  pending: PendingCall,
): AsyncGenerator<InferResponse, void, undefined> {
  const { identity, wanted } = pending;
  const { response, call, context } = await pending.open(client);
  let complete = false;
  try {
    if (!response.ok) throw await client.errorOf(response, call);
    const type = response.headers.get('content-type');
    if (!isEventStream(type)) {
      throw notEventStream(type, await readText(response, call, ERROR_BODY_LIMIT).catch(() => ''), context);
    }
    if (response.body === null) throw protocolError('the event stream has no body', context);
    let last: InferResponse | undefined;
    for await (const data of sseData(response.body, call, client.maxResponseBytes)) {
      last = eventResponse(data, identity, wanted, context);
      yield last;
    }
    // The body is complete: release the deadline now, even if the consumer never pulls again.
    complete = true;
    call.finish();
    yield finalResponse(last, identity);
  } finally {
    // Leaving early (break, error) must reach the server: closing the connection is HTTP's cancel.
    // A body read to its end has nothing left to close.
    if (!complete) call.abort('cancelled');
    call.finish();
  }
}

/** Posts the stop request to `/generate_stream` and reads its answer to the end. */
async function sendStop(
  client: HttpClient,
  stop: InferRequest,
  options: CallOptions | undefined,
): Promise<void> {
  const { send, context } = streamSend(stop);
  const call = client.begin(options, context);
  try {
    const response = await client.send(call, send, options);
    if (!response.ok) throw await client.errorOf(response, call);
    if (response.body === null) return;
    for await (const data of sseData(response.body, call, client.maxResponseBytes)) {
      eventResponse(data, stop, undefined, context);
    }
  } finally {
    call.finish();
  }
}

/** What the final response repeats of the last event: its model, version and id. */
export type ResponseIdentity = Pick<InferResponse, 'model' | 'modelVersion' | 'id'>;

/** The empty response with `final: true` that follows the last event of a cleanly ended body. */
export function finalResponse(last: ResponseIdentity | undefined, request: RequestIdentity): InferResponse {
  return {
    model: last?.model ?? request.model,
    modelVersion: last?.modelVersion ?? request.modelVersion ?? '',
    id: last?.id ?? request.id,
    outputs: [],
    parameters: {},
    final: true,
  };
}

/** Whether a 2xx answer's Content-Type is an event stream; an absent one is taken as one. */
export function isEventStream(contentType: string | null | undefined): boolean {
  return contentType == null || /^\s*text\/event-stream\s*(?:;|$)/i.test(contentType);
}

/** A 2xx answer of `/generate_stream` that is not an event stream (a proxy's page, plain JSON). */
export function notEventStream(contentType: string | null | undefined, body: string, context: ErrorContext) {
  return protocolError(
    `expected an event stream (text/event-stream), got '${contentType}' with ${describeText(body)}`,
    context,
  );
}

export function streamSend(request: InferRequest): { send: Send; context: ErrorContext } {
  const path = `${modelPath(request.model, request.modelVersion)}/generate_stream`;
  return {
    send: {
      method: 'POST',
      path,
      body: generateRequestJson(request),
      headers: [
        ['content-type', 'application/json'],
        ['accept', 'text/event-stream'],
      ],
    },
    context: { what: `POST ${path}`, requestId: request.id, model: request.model },
  };
}

/** One event's data as a response; an `{"error": ...}` event is thrown as the server's error. */
export function eventResponse(
  data: string,
  request: RequestIdentity,
  wanted: WantedOutputs | undefined,
  context: ErrorContext,
): InferResponse {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch (err) {
    const shown = data.length > 80 ? `${data.slice(0, 77)}...` : data;
    throw protocolError(`an event's data is not JSON: ${JSON.stringify(shown)}`, context, err);
  }
  // After the 200 is sent, Triton reports a failure as an event of its own.
  const error = errorField(json);
  if (error !== undefined) throw errorFromHttp(200, JSON.stringify({ error }), context);
  return generateResponse(json, request, false, context, wanted);
}
