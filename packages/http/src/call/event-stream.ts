import { type InferRequest, type InferResponse, TritonLlmError } from '@trtllm/sdk';
import type { CallOptions, InferSink, InferStream } from '@trtllm/sdk/transport';
import type { Exchange, HttpEngine, ResponseHandler, ResponseHead } from '../engine/index.js';
import { type ErrorContext, errorFromHttp, protocolError } from '../errors.js';
import { tooLarge } from './body.js';
import type { Call } from './call.js';
import { ERROR_BODY_LIMIT, type HttpClient, withoutRetryPlan } from './client.js';
import { type DataLineSink, takeDataLines } from './data-lines.js';
import { SilenceWatch, silentError } from './silence.js';
import { SseDecoder } from './sse-decoder.js';
import { errorField, isEventStream, notEventStream, type StreamMessages } from './stream-messages.js';

// Events parsed but not yet pulled before the engine stops reading: enough to ride out a slow
// consumer's hiccup, small enough that a stalled one holds a few windows, not the stream.
const HIGH_WATER = 32;

/** What the body of the answer is read as. */
type BodyMode = 'events' | 'error' | 'not-events';

/**
 * One `/generate_stream` call, whichever engine carries it: the answer's status and type, then
 * SSE, then one response per event, handed to the consumer's sink (`pull`) or iterator. Each event
 * is handed out as soon as it arrives, with `final` false; when the body ends cleanly one more
 * response follows, with no outputs and `final` true: an SSE stream only says it is over by
 * closing, and waiting for the next event before handing one out would delay every token. (gRPC
 * with `triton_enable_empty_final_response` ends the same way.) A non-2xx answer, an
 * `{"error": ...}` event, a body that is not an event stream, one that stops inside an event or an
 * event larger than `maxResponseBytes` fail the stream with its error. The request goes out when
 * reading starts; cancelling aborts the exchange, which closes the connection: how the server
 * learns of it.
 */
export class EventStream implements InferStream, ResponseHandler, DataLineSink {
  /** Cancelling closes the connection, which is how Triton learns the request is over. */
  readonly cancelsOnServer = true;
  private call: Call | undefined;
  private exchange: Exchange | undefined;
  private sse: SseDecoder | undefined;
  private decoder: TextDecoder | undefined;
  /**
   * Events read but not yet pulled: responses built from the bytes as they arrived (the read
   * buffer is reused), or the data text of an event for {@link eventResponse} to read in its turn.
   */
  private readonly events: (InferResponse | string)[] = [];
  private mode: BodyMode = 'events';
  /** Kept only for an answer that is not an event stream, to describe it. */
  private status = 0;
  private contentType: string | null | undefined;
  /** The body of such an answer, read only to quote it. */
  private text = '';
  private sink: InferSink | undefined;
  /**
   * What the final response repeats of the last event (model, version, id): kept as strings, not
   * the event itself, which an idle stream would hold with all its tensors. Undefined: no event yet.
   */
  private lastModel: string | undefined;
  private lastVersion = '';
  private lastId = '';
  private context: ErrorContext;
  private state: 'new' | 'open' | 'complete' | 'final-sent' | 'failed' = 'new';
  private error: unknown;
  private paused = false;
  private iterated = false;
  private cancelled = false;
  private readonly engine: HttpEngine;
  /** The liveness rule once the answer began (`silenceTimeoutMs`). */
  private readonly silence: SilenceWatch;
  /** What a stop request needs of the call: its signal, deadline and headers. */
  private readonly options: CallOptions | undefined;

  constructor(
    private readonly client: HttpClient,
    private readonly messages: StreamMessages,
    options: CallOptions | undefined,
  ) {
    this.options = withoutRetryPlan(options);
    this.engine = client.streams;
    const { model, id } = messages.identity;
    this.context = { what: 'POST /generate_stream', requestId: id, model };
    this.silence = new SilenceWatch(client.silenceTimeoutMs, (ms) =>
      this.fail(silentError(this.context, ms)),
    );
  }

  [Symbol.asyncIterator](): AsyncIterator<InferResponse> {
    if (this.iterated) {
      throw new TritonLlmError('failed_precondition', 'an InferStream can be iterated only once');
    }
    this.iterated = true;
    return {
      next: () =>
        new Promise<IteratorResult<InferResponse>>((resolve, reject) =>
          this.pull({
            onResponse: (value) => resolve({ value, done: false }),
            onEnd: () => resolve({ value: undefined, done: true }),
            onError: reject,
          }),
        ),
      return: () => {
        this.cancel();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  pull(sink: InferSink): void {
    this.sink = sink;
    if (this.state === 'new') this.start();
    this.deliver();
  }

  cancel(): void {
    this.cancelled = true;
    this.call?.abort('cancelled');
  }

  sendStop(stop: InferRequest): Promise<void> {
    return drain(new EventStream(this.client, this.messages.stop(stop), this.options));
  }

  onHead(head: ResponseHead): void {
    if (this.state !== 'open') return;
    this.silence.start();
    const ok = head.status >= 200 && head.status < 300;
    const type = head.headers.get('content-type');
    this.mode = !ok ? 'error' : isEventStream(type) ? 'events' : 'not-events';
    if (this.mode !== 'events') {
      this.status = head.status;
      this.contentType = type;
    }
  }

  onBody(bytes: Uint8Array, from: number, to: number): void {
    if (this.state !== 'open') return;
    this.silence.received();
    if (this.mode === 'events') {
      // Triton writes each event as `data: <json>\n\n`, usually whole in one read: where the
      // engine decodes natively, those are taken from the bytes directly; anything else (comments,
      // CR, other fields, an event split over reads) goes through the decoder and eventsource-parser.
      const limit = this.client.maxResponseBytes;
      const at =
        this.engine.text !== undefined && (this.sse === undefined || this.sse.idle)
          ? takeDataLines(bytes, from, to, limit, this)
          : from;
      if (at < 0) {
        this.fail(tooLarge(this.context, limit, 'an event of the stream'));
        return;
      }
      if (at < to) this.feed(bytes, at, to);
      else if (this.sink !== undefined) this.deliver();
      if (!this.paused && this.events.length >= HIGH_WATER) {
        this.paused = true;
        // The silence while paused is the consumer's, not the server's.
        this.silence.stop();
        this.exchange?.pause();
      }
      return;
    }
    // Error bodies are read only to quote them.
    if (this.text.length < ERROR_BODY_LIMIT) this.text += this.textOf(bytes, from, to);
  }

  onEnd(): void {
    if (this.state !== 'open') return;
    this.silence.stop();
    if (this.mode === 'events') {
      try {
        this.sse?.end();
      } catch (err) {
        this.fail(err);
        return;
      }
      this.takeEvents();
      this.state = 'complete';
      // The body is complete: release the deadline now, even if the consumer never pulls again.
      this.call?.finish();
      this.deliver();
      return;
    }
    const text = this.text + (this.decoder?.decode() ?? '');
    this.fail(
      this.mode === 'error'
        ? errorFromHttp(this.status, text.slice(0, ERROR_BODY_LIMIT), this.context)
        : notEventStream(this.contentType, text, this.context),
    );
  }

  onError(error: unknown): void {
    this.fail((this.call as Call).failure(error));
  }

  /**
   * The response of the event data in `bytes[from, to)`, or its text when {@link eventResponse}
   * must read it (an error event, or one that is not what it should be). Without `\u` escapes the
   * data is parsed as Latin-1: one byte per character, so a token that is not ASCII costs neither
   * decoding nor two-byte parsing, and its bytes are taken back as they came (see JsonStrings).
   */
  onDataLine(bytes: Uint8Array, from: number, to: number, escapes: boolean): void {
    this.events.push(this.eventOf(bytes, from, to, escapes));
  }

  /** The text of body bytes; the decoder is made on first need (whole one-line events need none). */
  private textOf(bytes: Uint8Array, from: number, to: number): string {
    this.decoder ??= new TextDecoder();
    return this.decoder.decode(bytes.subarray(from, to), { stream: true });
  }

  private eventOf(bytes: Uint8Array, from: number, to: number, escapes: boolean): InferResponse | string {
    // Only called where the engine has native text (see onBody).
    const text = this.engine.text as NonNullable<HttpEngine['text']>;
    if (!escapes) {
      try {
        const json: unknown = JSON.parse(text.latin1(bytes, from, to));
        if (errorField(json) === undefined) return this.messages.response(json, 'bytes', this.context);
      } catch {
        // eventResponse reports it, in its turn.
      }
    }
    return text.utf8(bytes, from, to);
  }

  private start(): void {
    this.state = 'open';
    let call: Call;
    let request: ReturnType<HttpClient['request']>;
    try {
      // A request that cannot be sent fails on the first read, not on stream().
      const { send, context } = this.messages.encode();
      this.context = context;
      request = this.client.request(send, this.options);
      call = this.client.begin(this.options, context);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.call = call;
    // Closing the connection is how the server learns of it; nothing more is handed out.
    call.onAbort(() => this.fail(call.failure(undefined)));
    if (this.cancelled) call.abort('cancelled');
    if (this.state === 'open') this.exchange = this.engine.request(request, this);
  }

  /** Feeds event bytes to the SSE decoder; a failure (an event over the limit) fails the stream. */
  private feed(bytes: Uint8Array, from: number, to: number): void {
    // Made on first need: whole one-line events (Triton's usual answer) never need it.
    this.sse ??= new SseDecoder(this.context, this.client.maxResponseBytes, this.engine.ownBuffers === true);
    try {
      this.sse.feed(bytes, from, to);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.takeEvents();
    if (this.sink !== undefined) this.deliver();
  }

  /** Moves the events the SSE decoder completed to the stream's queue. */
  private takeEvents(): void {
    const sse = this.sse;
    if (sse === undefined || sse.queue.length === 0) return;
    for (const data of sse.queue) this.events.push(data);
    sse.queue.length = 0;
  }

  private deliver(): void {
    const sink = this.sink;
    if (sink === undefined) return;
    const queue = this.events;
    if (queue.length > 0) {
      this.sink = undefined;
      const event = queue.shift() as InferResponse | string;
      let response: InferResponse;
      try {
        response = typeof event === 'string' ? this.eventResponse(event) : event;
      } catch (err) {
        // A bad event or an in-band error ends the stream even after its body was complete.
        if (this.state !== 'new') this.state = 'open';
        this.fail(err);
        sink.onError(this.error);
        return;
      }
      this.lastModel = response.model;
      this.lastVersion = response.modelVersion;
      this.lastId = response.id;
      if (this.paused && queue.length === 0) {
        this.paused = false;
        if (this.state === 'open') this.silence.start();
        this.exchange?.resume();
      }
      sink.onResponse(response);
      return;
    }
    switch (this.state) {
      case 'complete':
        this.sink = undefined;
        this.state = 'final-sent';
        sink.onResponse(this.finalResponse());
        return;
      case 'final-sent':
        this.sink = undefined;
        sink.onEnd();
        return;
      case 'failed':
        this.sink = undefined;
        sink.onError(this.error);
        return;
    }
  }

  /** One event's data as a response; an `{"error": ...}` event is thrown as the server's error. */
  private eventResponse(data: string): InferResponse {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch (err) {
      const shown = data.length > 80 ? `${data.slice(0, 77)}...` : data;
      throw protocolError(`an event's data is not JSON: ${JSON.stringify(shown)}`, this.context, err);
    }
    // After the 200 is sent, Triton reports a failure as an event of its own.
    const error = errorField(json);
    if (error !== undefined) throw errorFromHttp(200, JSON.stringify({ error }), this.context);
    return this.messages.response(json, 'text', this.context);
  }

  /** The empty response with `final: true` that follows the last event of a cleanly ended body. */
  private finalResponse(): InferResponse {
    const request = this.messages.identity;
    const last = this.lastModel !== undefined;
    return {
      model: last ? (this.lastModel as string) : request.model,
      modelVersion: last ? this.lastVersion : (request.modelVersion ?? ''),
      id: last ? this.lastId : request.id,
      outputs: [],
      parameters: {},
      final: true,
    };
  }

  /**
   * Ends the stream with `error` (the first one wins), aborting the exchange unless its answer was
   * read to the end. Events that arrived before a failure are handed out first, unless the call
   * was aborted: then nothing more is.
   */
  private fail(error: unknown): void {
    if (this.state !== 'new' && this.state !== 'open') return;
    this.state = 'failed';
    this.error = error;
    this.silence.stop();
    this.exchange?.abort();
    this.exchange = undefined;
    if (this.call?.aborted === true) this.events.length = 0;
    this.call?.finish();
    this.deliver();
  }
}

/** Reads a stream to its end (the answer to an in-band stop), throwing its error. */
function drain(stream: EventStream): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const sink: InferSink = {
      onResponse: () => stream.pull(sink),
      onEnd: resolve,
      onError: reject,
    };
    stream.pull(sink);
  });
}
