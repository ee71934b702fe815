import { StringDecoder } from 'node:string_decoder';
import {
  type CallOptions,
  type InferRequest,
  type InferResponse,
  type InferSink,
  type InferStream,
  TritonLlmError,
} from '@trtllm/sdk';
import { tooLarge } from '../body.js';
import type { Call } from '../call.js';
import { ERROR_BODY_LIMIT, type HttpClient, withoutRetryPlan } from '../client.js';
import { type ErrorContext, errorFromHttp, notHttpEndpoint, protocolError } from '../errors.js';
import {
  errorField,
  generateResponse,
  type RequestIdentity,
  requestIdentity,
  type WantedOutputs,
  wantedOutputs,
} from '../generate-response.js';
import { SseDecoder } from '../sse-decoder.js';
import {
  eventResponse,
  finalResponse,
  isEventStream,
  notEventStream,
  type ResponseIdentity,
  streamSend,
} from '../stream.js';
import type { Connection, ConnectionOwner, ConnectionPool } from './connection.js';
import { type DataLineSink, takeDataLines } from './data-lines.js';
import { keepAliveMs, type NodeStreamShared, requestText } from './request-head.js';
import {
  MalformedResponse,
  NotHttp1Response,
  type ResponseHead,
  ResponseParser,
  type ResponseSink,
} from './response-parser.js';

// Events parsed but not yet pulled before the socket stops reading: enough to ride out a slow
// consumer's hiccup, small enough that a stalled one holds a few windows, not the stream.
const HIGH_WATER = 32;

/** What the body of the answer is read as. */
type BodyMode = 'events' | 'error' | 'not-events';

/**
 * One `/generate_stream` call on a keep-alive connection, read straight from the socket's bytes:
 * HTTP/1.1 framing ({@link ResponseParser}), then SSE, then one response per event, handed to
 * the consumer's sink (`pull`) or iterator. It behaves as the fetch stream does (same responses,
 * same final response, same errors); cancelling closes the connection, which is how the server
 * learns of it. A connection reused from the pool that closes before any byte of the answer is
 * the keep-alive race (the server closed it as the request went out): the request is sent once
 * more on a new connection.
 */
export class NodeEventStream implements InferStream, ConnectionOwner, ResponseSink, DataLineSink {
  private call: Call | undefined;
  private connection: Connection | undefined;
  private parser: ResponseParser | undefined;
  private sse: SseDecoder | undefined;
  private decoder: StringDecoder | undefined;
  /**
   * Events read but not yet pulled: responses built from the bytes as they arrived (the read
   * buffer is reused), or the data text of an event for {@link eventResponse} to read in its turn.
   */
  private readonly events: (InferResponse | string)[] = [];
  private mode: BodyMode = 'events';
  /** Kept only for an answer that is not an event stream, to describe it. */
  private head: ResponseHead | undefined;
  /** The connection may carry another request after this answer; for how long idle (server's hint). */
  private keepAlive = false;
  private idleMs: number | undefined;
  private text = '';
  private sink: InferSink | undefined;
  /**
   * What the final response repeats of the last event (model, version, id): kept as strings, not
   * the event itself, which an idle stream would hold with all its tensors. Undefined: no event yet.
   */
  private lastModel: string | undefined;
  private lastVersion = '';
  private lastId = '';
  private readonly wanted: WantedOutputs | undefined;
  /** The request until it is written; then only what responses fall back on (see RequestIdentity). */
  private request: InferRequest | undefined;
  private readonly identity: RequestIdentity;
  private context: ErrorContext;
  /** The request as written, until the answer starts (then it is never sent again). */
  private wire = '';
  private state: 'new' | 'open' | 'complete' | 'final-sent' | 'failed' = 'new';
  private error: unknown;
  private paused = false;
  private retried = false;
  private iterated = false;
  private cancelled = false;
  /** The connection carrying the request came from the pool. */
  private reused = false;

  private readonly pool: ConnectionPool;
  /** What a stop request needs of the call: its signal, deadline and headers. */
  private readonly options: CallOptions | undefined;

  constructor(
    private readonly client: HttpClient,
    private readonly shared: NodeStreamShared,
    request: InferRequest,
    options: CallOptions | undefined,
  ) {
    this.options = withoutRetryPlan(options);
    this.request = request;
    this.identity = requestIdentity(request);
    this.pool = shared.pool;
    this.wanted = wantedOutputs(request);
    this.context = { what: 'POST /generate_stream', requestId: request.id, model: request.model };
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
    return drain(new NodeEventStream(this.client, this.shared, stop, this.options));
  }

  onBytes(bytes: Buffer): void {
    const parser = this.parser as ResponseParser;
    try {
      parser.push(bytes);
    } catch (err) {
      this.fail(
        err instanceof NotHttp1Response
          ? notHttpEndpoint(this.context, err)
          : err instanceof MalformedResponse
            ? protocolError(`the response is not valid HTTP/1.1: ${err.message}`, this.context, err)
            : err,
      );
      return;
    }
    if (parser.done && this.connection !== undefined) {
      const connection = this.connection;
      this.connection = undefined;
      if (this.keepAlive && !parser.trailing) this.pool.release(connection, this.idleMs);
      else connection.destroy();
    }
    if (!this.paused && this.events.length >= HIGH_WATER && this.connection) {
      this.paused = true;
      this.connection.socket.pause();
    }
  }

  onClose(error: Error | undefined): void {
    const parser = this.parser;
    this.connection = undefined;
    if (parser === undefined || this.state !== 'open') return;
    if (parser.end()) return;
    const call = this.call as Call;
    if (!parser.started && this.reused && !this.retried && !call.aborted) {
      this.retried = true;
      this.send(this.pool.connect());
      return;
    }
    this.fail(call.failure(error ?? new Error('the connection closed before the response ended')));
  }

  onHead(head: ResponseHead): void {
    this.wire = '';
    this.keepAlive = head.keepAlive;
    if (head.keepAlive) this.idleMs = keepAliveMs(head);
    const ok = head.status >= 200 && head.status < 300;
    const type = head.headers.get('content-type');
    this.mode = !ok ? 'error' : isEventStream(type) ? 'events' : 'not-events';
    if (this.mode !== 'events') this.head = head;
  }

  onBody(bytes: Buffer, from: number, to: number): void {
    if (this.mode === 'events') {
      // Triton writes each event as `data: <json>\n\n`, usually whole in one read: those are
      // taken from the bytes directly; anything else (comments, CR, other fields, an event split
      // over reads) goes through the decoder and eventsource-parser.
      const limit = this.client.maxResponseBytes;
      const at = this.sse === undefined || this.sse.idle ? takeDataLines(bytes, from, to, limit, this) : from;
      if (at < 0) {
        this.fail(tooLarge(this.call as Call, limit as number));
        return;
      }
      if (at < to) this.feed(this.textOf(bytes.subarray(at, to)));
      else if (this.sink !== undefined) this.deliver();
      return;
    }
    // Error bodies are read only to quote them.
    if (this.text.length < ERROR_BODY_LIMIT) this.text += this.textOf(bytes.subarray(from, to));
  }

  /** The text of body bytes; the decoder is made on first need (whole one-line events need none). */
  private textOf(bytes: Buffer): string {
    this.decoder ??= new StringDecoder('utf8');
    return this.decoder.write(bytes);
  }

  onComplete(): void {
    if (this.mode === 'events') {
      if (!this.feed(this.decoder?.end() ?? '')) return;
      try {
        this.sse?.end();
      } catch (err) {
        this.fail(err);
        return;
      }
      this.state = 'complete';
      // The body is complete: release the deadline now, even if the consumer never pulls again.
      this.call?.finish();
      this.deliver();
      return;
    }
    const text = this.text + (this.decoder?.end() ?? '');
    const head = this.head as ResponseHead;
    this.fail(
      this.mode === 'error'
        ? errorFromHttp(head.status, text.slice(0, ERROR_BODY_LIMIT), this.context)
        : notEventStream(head.headers.get('content-type'), text, this.context),
    );
  }

  private start(): void {
    this.state = 'open';
    let call: Call;
    try {
      // As with fetch, a request that cannot be sent fails on the first read, not on stream().
      const { send, context } = streamSend(this.request as InferRequest);
      this.request = undefined;
      this.context = context;
      this.wire = requestText(this.shared, send, this.client, this.options);
      call = this.client.begin(this.options, context);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.call = call;
    // Closing the connection is how the server learns of it; nothing more is handed out.
    call.onAbort(() => this.fail(call.failure(undefined)));
    if (this.cancelled) call.abort('cancelled');
    if (this.state === 'open') this.send(this.pool.acquire());
  }

  private send(connection: Connection): void {
    this.connection = connection;
    this.reused = connection.reused;
    this.parser = new ResponseParser(this);
    connection.owner = this;
    connection.socket.write(this.wire);
  }

  /**
   * The response of the event data in `bytes[from, to)`, or its text when {@link eventResponse}
   * must read it (an error event, or one that is not what it should be). Without `\\u` escapes the
   * data is parsed as Latin-1: one byte per character, so a token that is not ASCII costs neither
   * decoding nor two-byte parsing, and its bytes are taken back as they came (see JsonStrings).
   */
  onDataLine(bytes: Buffer, from: number, to: number, escapes: boolean): void {
    this.events.push(this.eventOf(bytes, from, to, escapes));
  }

  private eventOf(bytes: Buffer, from: number, to: number, escapes: boolean): InferResponse | string {
    if (!escapes) {
      try {
        const json: unknown = JSON.parse(bytes.toString('latin1', from, to));
        if (errorField(json) === undefined)
          return generateResponse(json, this.identity, false, this.context, this.wanted, 'bytes');
      } catch {
        // eventResponse reports it, in its turn.
      }
    }
    return bytes.toString('utf8', from, to);
  }

  /** Feeds event text; false when that failed the stream. */
  private feed(text: string): boolean {
    if (text === '') return true;
    // Made on first need: whole one-line events (Triton's usual answer) never need it.
    this.sse ??= new SseDecoder(this.call as Call, this.client.maxResponseBytes);
    const sse = this.sse;
    try {
      sse.feed(text);
    } catch (err) {
      this.fail(err);
      return false;
    }
    for (const data of sse.queue) this.events.push(data);
    sse.queue.length = 0;
    if (this.sink !== undefined) this.deliver();
    return true;
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
        response =
          typeof event === 'string' ? eventResponse(event, this.identity, this.wanted, this.context) : event;
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
      if (this.paused && queue.length === 0 && this.connection !== undefined) {
        this.paused = false;
        this.connection.socket.resume();
      }
      sink.onResponse(response);
      return;
    }
    switch (this.state) {
      case 'complete':
        this.sink = undefined;
        this.state = 'final-sent';
        sink.onResponse(finalResponse(this.lastIdentity(), this.identity));
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

  private lastIdentity(): ResponseIdentity | undefined {
    const model = this.lastModel;
    return model === undefined ? undefined : { model, modelVersion: this.lastVersion, id: this.lastId };
  }

  /**
   * Ends the stream with `error` (the first one wins), closing the connection unless its
   * response was read to the end (then `onBytes` gives it back to the pool). Events that arrived
   * before a failure are handed out first, unless the call was aborted: then nothing more is.
   */
  private fail(error: unknown): void {
    if (this.state !== 'new' && this.state !== 'open') return;
    this.state = 'failed';
    this.error = error;
    const connection = this.connection;
    if (connection !== undefined && this.parser?.done !== true) {
      this.connection = undefined;
      connection.destroy();
    }
    if (this.call?.aborted === true) this.events.length = 0;
    this.call?.finish();
    this.deliver();
  }
}

/** Reads a stream to its end (the answer to an in-band stop), throwing its error. */
function drain(stream: NodeEventStream): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const sink: InferSink = {
      onResponse: () => stream.pull(sink),
      onEnd: resolve,
      onError: reject,
    };
    stream.pull(sink);
  });
}
