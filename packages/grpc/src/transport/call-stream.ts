import { Code, ConnectError } from '@connectrpc/connect';
import {
  type InferRequest,
  type InferResponse,
  type InferSink,
  type InferStream,
  TritonLlmError,
} from '@trtllm/sdk';
import { CallStatus, resetError } from './call-status.js';
import { toTritonLlmError } from './errors.js';
import { FrameReader } from './grpc-frames.js';
import { H2_NO_ERROR } from './h2/frames.js';
import type { H2Headers, H2Stream, H2StreamOwner } from './h2/stream.js';
import { consumerThrew, DONE, ResponseQueue } from './response-queue.js';
import { encodeStreamRequest, FinalResponses, inflate } from './stream-codec.js';
import { type H2StreamConfig, streamHeaderBlock } from './stream-config.js';
import { streamErrorFromMessage } from './stream-error.js';
import { readStreamResponse, type WireResponse } from './wire-reader.js';

// Responses read ahead of the consumer before the HTTP/2 stream is paused; flow control then
// holds the server back (a slow reader must not make the client buffer without bound).
const HIGH_WATER = 32;
// How much of a body that is not gRPC (a proxy's error page) is kept to quote in the error.
const QUOTE_BYTES = 200;

/**
 * One streamed request on its own HTTP/2 stream of the transport's socket-level connection
 * (`h2-session.ts`): the default gRPC path.
 * Ending it early resets that stream alone (RST_STREAM CANCEL), so the server cancels exactly this
 * request. There is no generator or stream pipeline between the socket and the consumer: each
 * response is read from its DATA chunk by `readStreamResponse` and either resolves the consumer's
 * pending `next()` or waits in a short queue; past `HIGH_WATER` responses the stream is paused.
 *
 * A stop request shares the main request's id and gets its own empty final response, so after
 * `sendStop` the stream waits for two final-flagged responses and reports only the last as final.
 */
export class H2InferStream extends ResponseQueue implements InferStream, H2StreamOwner {
  readonly cancelsOnServer = true;
  private h2: H2Stream | undefined;
  private phase: 'idle' | 'open' | 'draining' | 'done' = 'idle';
  private paused = false;
  private stopSent = false;
  private readonly finals = new FinalResponses();
  private readonly status = new CallStatus();
  private frames: FrameReader | undefined;
  /** The start of a body that is not gRPC, to quote. */
  private quoted: Buffer | undefined;
  private deadline: ReturnType<typeof setTimeout> | undefined;
  /** The request until it is encoded; an idle stream keeps none of its inputs. */
  private request: InferRequest | undefined;

  constructor(
    request: InferRequest,
    private readonly signal: AbortSignal | undefined,
    private readonly config: H2StreamConfig,
  ) {
    super(request.model, request.id);
    this.request = request;
  }

  pull(sink: InferSink): void {
    if (this.phase === 'idle') {
      try {
        this.start();
      } catch (err) {
        sink.onError(this.toError(err));
        return;
      }
    }
    if (this.queued > 0) {
      const value = this.dequeue();
      if (this.paused && this.queued < HIGH_WATER / 2) {
        this.paused = false;
        this.h2?.resume();
      }
      sink.onResponse(value);
      return;
    }
    if (this.failure !== undefined) sink.onError(this.failure);
    else if (this.phase === 'done') sink.onEnd();
    else this.waiter = sink;
  }

  async return(): Promise<IteratorResult<InferResponse>> {
    if (this.phase === 'draining' && this.failure === undefined) {
      // The last final arrived: wait for the server to end the call, as a clean end does.
      await new Promise<void>((resolve) => {
        this.waiter = { onResponse: () => undefined, onEnd: resolve, onError: () => resolve() };
      });
      return DONE;
    }
    // The consumer left early: resetting the stream is what tells the server to stop.
    this.leave();
    return DONE;
  }

  async sendStop(stop: InferRequest): Promise<void> {
    try {
      if (this.phase === 'idle') this.start();
      // Once the main request has its final response there is nothing left to stop.
      if (this.phase !== 'open' || this.stopSent) return;
      const frame = this.encode(stop);
      this.stopSent = true;
      this.finals.expectStop();
      this.h2?.write(frame);
    } catch (err) {
      throw this.toError(err);
    }
  }

  private start(): void {
    if (this.signal?.aborted === true) throw this.signal.reason;
    const first = this.encode(this.request!);
    this.request = undefined;
    const { timeoutMs, headers, headerBlock, sessions, url, maxReceiveBytes } = this.config;
    const block = timeoutMs === undefined ? headerBlock : streamHeaderBlock(url, headers, timeoutMs);
    const h2 = sessions.open(block, this);
    this.phase = 'open';
    this.h2 = h2;
    this.frames = new FrameReader(maxReceiveBytes);
    this.signal?.addEventListener('abort', this, { once: true });
    if (timeoutMs !== undefined) {
      this.deadline = setTimeout(() => {
        this.fail(new ConnectError(`the deadline of ${timeoutMs} ms passed`, Code.DeadlineExceeded), true);
      }, timeoutMs);
    }
    h2.write(first);
  }

  private encode(request: InferRequest): Buffer {
    return encodeStreamRequest(request, this.config);
  }

  /** @internal */
  headersArrived(headers: H2Headers): void {
    this.status.headers(headers);
  }

  /** @internal */
  trailersArrived(trailers: H2Headers): void {
    this.status.trailers(trailers);
  }

  /** @internal */
  dataArrived(buf: Buffer, start: number, end: number): void {
    if (this.phase === 'done') return;
    if (this.status.notGrpc !== undefined) {
      // Not gRPC at all (an HTML error page of a proxy): keep its start for the error, parse nothing.
      const have = this.quoted?.length ?? 0;
      if (have < QUOTE_BYTES) {
        const part = buf.subarray(start, Math.min(end, start + QUOTE_BYTES - have));
        this.quoted = this.quoted === undefined ? Buffer.from(part) : Buffer.concat([this.quoted, part]);
      }
      return;
    }
    try {
      this.frames!.push(buf, start, end, this);
    } catch (err) {
      this.fail(err, true);
    }
  }

  /** @internal */
  streamFailed(err: unknown): void {
    this.fail(err, false);
  }

  /** @internal One response message (the frame reader's callback); false stops the reader. */
  message(buf: Buffer, start: number, end: number, compressed: boolean): boolean {
    if (this.phase === 'done') return false;
    const read = compressed
      ? readStreamResponse(
          inflate(buf.subarray(start, end), this.status.encoding, this.config.maxReceiveBytes),
          this.id,
        )
      : readStreamResponse(buf, this.id, start, end);
    if (typeof read === 'string') {
      this.fail(streamErrorFromMessage(read, { model: this.model, requestId: this.id }), true);
      return false;
    }
    const response = this.accept(read);
    if (response !== undefined) this.deliver(response);
    return true;
  }

  /** The response to hand to the consumer, or undefined for one it must not see. */
  private accept(r: WireResponse): InferResponse | undefined {
    const response = this.finals.accept(r);
    if (this.finals.complete && this.phase === 'open') {
      this.phase = 'draining';
      // Half-close: the server ends the call once it has nothing more for it.
      this.h2?.end();
    }
    return response;
  }

  private deliver(response: InferResponse): void {
    this.handOn(response);
    if (!this.paused && this.queued >= HIGH_WATER) {
      this.paused = true;
      this.h2?.pause();
    }
  }

  /** @internal The HTTP/2 stream closed: a clean end, or the reason the call failed. */
  closed(rstCode: number | undefined): void {
    if (this.phase === 'done') return;
    const error = this.callError(rstCode);
    if (error !== undefined) {
      this.fail(error, true);
      return;
    }
    this.finish();
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.onEnd();
  }

  /** Why the call failed, or undefined when it ended cleanly after the last final response. */
  private callError(rstCode: number | undefined): unknown {
    // A response that is not gRPC at all (HTTP status, content type) says so before any status.
    const notGrpc = this.status.notGrpc;
    if (notGrpc !== undefined) return this.quote(notGrpc);
    const status = this.status.error;
    if (status !== undefined) return status;
    if (!this.status.statusSeen) {
      if (rstCode !== undefined && rstCode !== H2_NO_ERROR) return resetError(rstCode);
      if (this.h2?.endReceived === true) {
        // The stream ended (END_STREAM) with no status: not something a gRPC server does, but what
        // a proxy does when its idle timeout cuts a call (HAProxy's `timeout server`).
        return new ConnectError(
          'the stream ended without a gRPC status: the server, or a proxy in front of it (an idle timeout), cut the call short',
          Code.Unavailable,
        );
      }
      // No status at all: the connection went away under the call.
      return new ConnectError('the connection closed before the call ended', Code.Unavailable);
    }
    if (this.frames?.incomplete === true) {
      return new ConnectError('protocol error: the call ended inside a message', Code.Internal);
    }
    if (!this.finals.complete) {
      return new TritonLlmError(
        'protocol',
        `ModelStreamInfer '${this.model}': the call ended before the final response of request '${this.id}'`,
      );
    }
    return undefined;
  }

  /** The header error of an answer that is not gRPC, with the start of its body quoted. */
  private quote(error: ConnectError): ConnectError {
    const body = this.quoted;
    if (body === undefined || body.length === 0) return error;
    const text = body.toString('utf8').replace(/\s+/g, ' ').trim();
    const cut = body.length >= QUOTE_BYTES ? '...' : '';
    return new ConnectError(`${error.rawMessage}: the answer is not gRPC: "${text}${cut}"`, error.code);
  }

  /** The signal's abort (the stream is its own listener object: no closure per request). */
  handleEvent(): void {
    this.fail(this.signal?.reason, true);
  }

  /** Ends the call at once (RST_STREAM CANCEL); a read in progress fails with `cancelled`. */
  cancel(): void {
    this.fail(
      new TritonLlmError('cancelled', `ModelStreamInfer '${this.model}' was cancelled by the client`, {
        model: this.model,
        requestId: this.id,
      }),
      true,
    );
  }

  /** The consumer left: reset the call, with nobody left to tell. */
  private leave(): void {
    if (this.phase === 'done') return;
    this.finish();
    this.h2?.cancel();
  }

  /** Ends the call with an error: resets the stream when `reset`, and hands the error on. */
  private fail(err: unknown, reset: boolean): void {
    if (this.phase === 'done') return;
    const error = this.toError(err);
    this.failure = error;
    this.finish();
    if (reset) this.h2?.cancel();
    // Responses that arrived before the failure are still delivered first (see pull()). Called
    // from a timer or the signal's event, a consumer's throw would reach the process: the stream
    // has failed already, so it goes to the log.
    this.tellError(error, (err) => this.config.logger.warn(consumerThrew(err)));
  }

  private finish(): void {
    this.phase = 'done';
    if (this.deadline !== undefined) clearTimeout(this.deadline);
    this.signal?.removeEventListener('abort', this);
  }

  private toError(err: unknown): TritonLlmError {
    return toTritonLlmError(err, {
      method: 'ModelStreamInfer',
      model: this.model,
      requestId: this.id,
      signal: this.signal,
    });
  }
}
