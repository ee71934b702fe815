import type { InferRequest, InferResponse } from '@trtllm/sdk';
import { type ErrorContext, protocolError } from '../errors.js';
import { describeText } from './body.js';
import type { Send } from './client.js';

/**
 * How the strings of a parsed event relate to its bytes. `text`: decoded from UTF-8, as usual.
 * `bytes`: the event was read as Latin-1 (one character per byte, no `\u` escapes in it), so each
 * string's characters are its UTF-8 bytes. That spares decoding a whole event, and parsing it as
 * two-byte text, when one token in it is not ASCII.
 */
export type JsonStrings = 'text' | 'bytes';

/** What a response falls back on when the server leaves it out. */
export type StreamIdentity = Pick<InferRequest, 'model' | 'modelVersion' | 'id'>;

/**
 * What the transport gives an event stream: its request, and how an event's JSON becomes core's
 * response (the stream itself knows only SSE, Triton's error events and the final response).
 */
export interface StreamMessages {
  /** What the final response falls back on when no event came. */
  readonly identity: StreamIdentity;
  /** The request, encoded when the stream starts (bad input fails on the first read); once. */
  encode(): { readonly send: Send; readonly context: ErrorContext };
  /** One event's parsed JSON, not an error event, as a response with `final` false. */
  response(json: unknown, strings: JsonStrings, context: ErrorContext): InferResponse;
  /** The messages of a stop request sent in-band on the same endpoint. */
  stop(request: InferRequest): StreamMessages;
}

/** The `error` of a parsed generate body or SSE event, when it carries one. */
export function errorField(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json) || !('error' in json))
    return undefined;
  const { error } = json as { error: unknown };
  return typeof error === 'string' ? error : JSON.stringify(error);
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
