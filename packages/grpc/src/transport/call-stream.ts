import { type InferRequest, type InferResponse, TritonLlmError } from '@trtllm/sdk';
import type { InferSink, InferStream } from '@trtllm/sdk/transport';
import { type CallListener, GrpcCall } from '../call/index.js';
import { streamErrorFromMessage, toTritonLlmError } from './error-mapping.js';
import { consumerThrew, DONE, ResponseQueue } from './response-queue.js';
import { encodeStreamRequest, FinalResponses } from './stream-codec.js';
import { type StreamConfig, streamRequest } from './stream-config.js';
import { readStreamResponse, type WireResponse } from './wire-reader.js';

// Responses read ahead of the consumer before the HTTP/2 stream is paused; flow control then
// holds the server back (a slow reader must not make the client buffer without bound).
const HIGH_WATER = 32;
// How long a call whose request failed in the stream stays open for the server to end it (see
// `failInStream`) before it is reset after all.
const LINGER_MS = 5_000;

/**
 * One streamed request on a `ModelStreamInfer` call of its own (a {@link GrpcCall}): the default
 * gRPC path.
 * Ending it early resets that call alone (RST_STREAM CANCEL), so the server cancels exactly this
 * request. There is no generator or stream pipeline between the socket and the consumer: each
 * response is read from its message by `readStreamResponse` and either resolves the consumer's
 * pending `next()` or waits in a short queue; past `HIGH_WATER` responses the call is paused.
 *
 * A stop request shares the main request's id and gets its own empty final response, so after
 * `sendStop` the stream waits for two final-flagged responses and reports only the last as final.
 */
export class CallStream extends ResponseQueue implements InferStream, CallListener {
  readonly cancelsOnServer = true;
  private call: GrpcCall | undefined;
  private phase: 'idle' | 'open' | 'draining' | 'done' = 'idle';
  private paused = false;
  private stopSent = false;
  private readonly finals = new FinalResponses();
  /** The request until it is encoded; an idle stream keeps none of its inputs. */
  private request: InferRequest | undefined;
  /** After an in-stream error: the reset that ends the call if the server does not. */
  private linger: ReturnType<typeof setTimeout> | undefined;

  constructor(
    request: InferRequest,
    private readonly signal: AbortSignal | undefined,
    private readonly config: StreamConfig,
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
        this.call?.resume();
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
      this.call?.send(frame);
    } catch (err) {
      throw this.toError(err);
    }
  }

  private start(): void {
    if (this.signal?.aborted === true) throw this.signal.reason;
    const first = this.encode(this.request!);
    this.request = undefined;
    const { engine, timeoutMs, headers, request, maxReceiveBytes } = this.config;
    const call = new GrpcCall(
      {
        engine,
        request: timeoutMs === undefined ? request : streamRequest(engine, headers, timeoutMs),
        maxReceiveBytes,
        timeoutMs,
      },
      this,
    );
    this.phase = 'open';
    this.call = call;
    this.signal?.addEventListener('abort', this, { once: true });
    call.send(first);
  }

  private encode(request: InferRequest): Buffer {
    return encodeStreamRequest(request, this.config);
  }

  /** @internal One response message of the call; false stops the reading. */
  message(buf: Buffer, start: number, end: number): boolean {
    if (this.phase === 'done') return false;
    const read = readStreamResponse(buf, this.id, start, end);
    if (typeof read === 'string') {
      this.failInStream(streamErrorFromMessage(read, { model: this.model, requestId: this.id }));
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
      this.call?.halfClose();
    }
    return response;
  }

  private deliver(response: InferResponse): void {
    this.handOn(response);
    if (!this.paused && this.queued >= HIGH_WATER) {
      this.paused = true;
      this.call?.pause();
    }
  }

  /**
   * The request failed with the server's `error_message`, but the server may still have responses
   * for it: NVIDIA's `tensorrt_llm_bls` sends a flags-only final after its error. Resetting the
   * stream while it does so crashed Triton 2.51 (SIGSEGV in `ModelStreamInferHandler::Process`;
   * measured in docs/RELIABILITY.md), so the consumer gets the error at once while the call is
   * half-closed and left for the server to end, what it still sends read and dropped.
   * A server that has not ended it after `LINGER_MS` gets the reset after all.
   */
  private failInStream(error: TritonLlmError): void {
    const call = this.call;
    const open = this.phase === 'open';
    this.fail(error, false);
    if (call === undefined) return;
    if (open) call.halfClose();
    if (this.paused) {
      this.paused = false;
      call.resume();
    }
    // A script that caught the error may end: neither the open call nor its timer keeps it alive.
    call.setIdle(true);
    this.linger = setTimeout(() => call.cancel(), LINGER_MS);
    this.linger.unref?.();
  }

  /** @internal The call ended: cleanly, or with the reason it failed. */
  ended(error: unknown): void {
    if (this.linger !== undefined) {
      clearTimeout(this.linger);
      this.linger = undefined;
    }
    if (this.phase === 'done') return;
    if (error !== undefined) {
      this.fail(error, false);
      return;
    }
    if (!this.finals.complete) {
      this.fail(
        new TritonLlmError(
          'protocol',
          `ModelStreamInfer '${this.model}': the call ended before the final response of request '${this.id}'`,
        ),
        false,
      );
      return;
    }
    this.finish();
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.onEnd();
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
    this.call?.cancel();
  }

  /** Ends the call with an error: resets the stream when `reset`, and hands the error on. */
  private fail(err: unknown, reset: boolean): void {
    if (this.phase === 'done') return;
    const error = this.toError(err);
    this.failure = error;
    this.finish();
    if (reset) this.call?.cancel();
    // Responses that arrived before the failure are still delivered first (see pull()). Called
    // from a timer or the signal's event, a consumer's throw would reach the process: the stream
    // has failed already, so it goes to the log.
    this.tellError(error, (err) => this.config.logger.warn(consumerThrew(err)));
  }

  private finish(): void {
    this.phase = 'done';
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
