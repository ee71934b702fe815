import { fromBinary } from '@bufbuild/protobuf';
import { type InferRequest, type InferResponse, TritonLlmError } from '@trtllm/sdk';
import type { InferSink, InferStream } from '@trtllm/sdk/transport';
import { type CallListener, GrpcCall } from '../call/index.js';
import { ModelStreamInferResponseSchema } from '../gen/inference/grpc_service_pb.js';
import { streamErrorFromMessage, toTritonLlmError } from './error-mapping.js';
import { consumerThrew, DONE, ResponseQueue } from './response-queue.js';
import { encodeStreamRequest, FinalResponses } from './stream-codec.js';
import type { StreamConfig } from './stream-config.js';
import { readStreamResponse, type WireResponse } from './wire-reader.js';
import { decimalValue } from './wire-walker.js';

/** Shared calls of `multiplex: true` (see {@link SharedCalls}). */
export const DEFAULT_MULTIPLEX_CALLS = 32;

/**
 * `multiplex: true`: many requests on each of a few shared `ModelStreamInfer` calls, as Triton's
 * own clients do, on the package's own HTTP/2 engine and wire reader. It keeps the HTTP/2 streams
 * at a fixed few per connection whatever the concurrency, for proxies and servers that limit them.
 * The price: ending one request early cannot cancel its shared call (that would cancel them all),
 * so it only stops listening (`cancelsOnServer: false`; the client then sends the model's in-band
 * stop where there is one), and responses are buffered per request, since one slow reader must
 * not stall the others.
 *
 * Why a few calls and not one: a server writes one call's responses one at a time (Triton's gRPC
 * server, like grpc-js, keeps one write in flight per call), so with every request on one call
 * each response is a socket write of its own and the client wakes for each, which costs more CPU
 * per token than a call per request (docs/PERFORMANCE.md). Responses of different calls leave in
 * the same write.
 * A request joins the call with the fewest requests; one request at a time stays on one call.
 */
export class SharedCalls {
  /** The shared calls, opened on first need; undefined where none is open. */
  private readonly calls: (SharedCall | undefined)[];
  /** The ids of the requests on every shared call: one lookup tells a duplicate, not one per call. */
  readonly inFlight = new Set<string>();
  private closed = false;

  constructor(
    private readonly config: StreamConfig,
    calls: number,
  ) {
    this.calls = new Array<SharedCall | undefined>(calls).fill(undefined);
  }

  stream(request: InferRequest, signal: AbortSignal | undefined): InferStream {
    return new MultiplexedStream(this, request, signal);
  }

  /** Adds a request to the least busy shared call (opened if there is none) and sends it. */
  join(member: MultiplexedStream, request: InferRequest): SharedCall {
    if (this.closed) {
      throw new TritonLlmError('unavailable', 'this gRPC transport is closed', { retryable: false });
    }
    if (this.inFlight.has(request.id)) {
      throw new TritonLlmError(
        'invalid_argument',
        `requestId: '${request.id}' is already in flight on this connection; ids must be unique to tell responses apart`,
        { model: request.model, requestId: request.id },
      );
    }
    let lane = 0;
    let fewest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.calls.length; i++) {
      // The first of equals wins, so an unopened call is opened only when every open one is busy.
      const size = this.calls[i]?.members.size ?? 0;
      if (size < fewest) {
        fewest = size;
        lane = i;
      }
    }
    // Encoded first: a request too large to send fails without opening a call it will not use.
    const bytes = this.encode(request);
    const call = this.calls[lane] ?? this.open(lane);
    call.add(request.id, member);
    call.send(bytes);
    return call;
  }

  encode(request: InferRequest): Buffer {
    return encodeStreamRequest(request, this.config);
  }

  /** A consumer threw while told of a failure, from a timer or a signal: only the log can hear it. */
  warn(err: unknown): void {
    this.config.logger.warn(consumerThrew(err));
  }

  /** The call ended: its place opens a new one when next needed. */
  ended(call: SharedCall): void {
    const lane = this.calls.indexOf(call);
    if (lane >= 0) this.calls[lane] = undefined;
  }

  close(): void {
    this.closed = true;
    for (const call of this.calls) {
      call?.end(
        new TritonLlmError('unavailable', 'this gRPC transport is closed', { retryable: false }),
        true,
      );
    }
  }

  private open(lane: number): SharedCall {
    const call = new SharedCall(this, this.config);
    this.calls[lane] = call;
    return call;
  }
}

/** The shared `ModelStreamInfer` call: requests out, responses handed to their request by id. */
class SharedCall implements CallListener {
  readonly members = new Map<string, MultiplexedStream>();
  /** The decimal ids among the members' (the SDK's own), by value: see `readStreamResponse`. */
  private readonly decimalIds = new Map<number, string>();
  private readonly call: GrpcCall;
  private over = false;

  constructor(
    private readonly mux: SharedCalls,
    config: StreamConfig,
  ) {
    this.call = new GrpcCall(
      { engine: config.engine, request: config.request, maxReceiveBytes: config.maxReceiveBytes },
      this,
    );
  }

  send(bytes: Buffer): void {
    this.call.send(bytes);
  }

  add(id: string, member: MultiplexedStream): void {
    this.members.set(id, member);
    // The first request on a call that waited idle: it keeps the process alive again.
    if (this.members.size === 1) this.call.setIdle(false);
    this.mux.inFlight.add(id);
    const value = decimalValue(id);
    if (value !== undefined) this.decimalIds.set(value, id);
  }

  /** A request left (its last response came, or its consumer went): its later responses are dropped. */
  leave(member: MultiplexedStream, id: string): void {
    if (this.members.get(id) !== member) return;
    this.members.delete(id);
    // A shared call between requests stays open for the next one, but lets the process exit.
    if (this.members.size === 0) this.call.setIdle(true);
    this.mux.inFlight.delete(id);
    const value = decimalValue(id);
    if (value !== undefined) this.decimalIds.delete(value);
  }

  /** @internal One response message of the call. */
  message(buf: Buffer, start: number, end: number): boolean {
    const read = readStreamResponse(buf, undefined, start, end, this.decimalIds);
    if (typeof read !== 'string') {
      // A response of a request whose consumer left is dropped.
      this.members.get(read.id)?.deliver(read);
      return !this.over;
    }
    // An error carries its request's id in the rare cases Triton knows it (read the slow way).
    const id = fromBinary(ModelStreamInferResponseSchema, buf.subarray(start, end)).inferResponse?.id ?? '';
    const member = this.members.get(id);
    if (member !== undefined) member.failWith(read);
    // An error Triton could not tie to a request concerns every request on the call.
    else if (id === '') for (const m of [...this.members.values()]) m.failWith(read);
    return !this.over;
  }

  /** @internal The call ended: whatever its status, the requests still on it are cut short. */
  ended(error: unknown): void {
    this.end(
      error ??
        new TritonLlmError('protocol', 'ModelStreamInfer: the shared call ended with requests still open'),
      false,
    );
  }

  /** Ends the call: every request still on it fails with `err`; the next request opens a new call. */
  end(err: unknown, reset: boolean): void {
    if (this.over) return;
    this.over = true;
    this.mux.ended(this);
    if (reset) this.call.cancel();
    const members = [...this.members.values()];
    for (const id of this.members.keys()) this.mux.inFlight.delete(id);
    this.members.clear();
    this.decimalIds.clear();
    for (const member of members) member.fail(err);
  }
}

/** One request on the shared call; iterates and pulls like a request on a call of its own. */
class MultiplexedStream extends ResponseQueue implements InferStream {
  readonly cancelsOnServer = false;
  private call: SharedCall | undefined;
  private started = false;
  private readonly finals = new FinalResponses();
  private finished = false;
  /**
   * The request until it is sent: a request waiting for its tokens keeps none of its inputs, as on
   * the default path (its tensors were most of what an idle multiplexed request held).
   */
  private request: InferRequest | undefined;

  constructor(
    private readonly mux: SharedCalls,
    request: InferRequest,
    private readonly signal: AbortSignal | undefined,
  ) {
    super(request.model, request.id);
    this.request = request;
  }

  pull(sink: InferSink): void {
    if (!this.started) {
      try {
        this.start();
      } catch (err) {
        sink.onError(this.toError(err));
        return;
      }
    }
    if (this.queued > 0) sink.onResponse(this.dequeue());
    else if (this.failure !== undefined) sink.onError(this.failure);
    else if (this.finished) sink.onEnd();
    else this.waiter = sink;
  }

  async return(): Promise<IteratorResult<InferResponse>> {
    this.finish();
    return DONE;
  }

  async sendStop(stop: InferRequest): Promise<void> {
    try {
      if (!this.started) this.start();
      if (this.finished || this.call === undefined) return;
      const bytes = this.mux.encode(stop);
      this.finals.expectStop();
      this.call.send(bytes);
    } catch (err) {
      throw this.toError(err);
    }
  }

  /** Stops listening at once; a read in progress fails with `cancelled`. */
  cancel(): void {
    this.fail(
      new TritonLlmError('cancelled', `ModelStreamInfer '${this.model}' was cancelled by the client`, {
        model: this.model,
        requestId: this.id,
      }),
    );
  }

  private start(): void {
    this.started = true;
    if (this.signal?.aborted === true) throw this.signal.reason;
    const request = this.request!;
    this.request = undefined;
    this.call = this.mux.join(this, request);
    this.signal?.addEventListener('abort', this, { once: true });
  }

  /** The signal's abort. */
  handleEvent(): void {
    this.fail(this.signal?.reason);
  }

  /** @internal A response of this request. */
  deliver(r: WireResponse): void {
    if (this.finished) return;
    const response = this.finals.accept(r);
    if (response === undefined) return;
    // Finished first: a consumer that pulls again from inside onResponse must find the end.
    if (this.finals.complete) this.finish();
    this.handOn(response);
  }

  /** @internal The server's in-stream error for this request. */
  failWith(message: string): void {
    this.fail(streamErrorFromMessage(message, { model: this.model, requestId: this.id }));
  }

  /** @internal Ends the request with an error; responses that came before it are handed out first. */
  fail(err: unknown): void {
    if (this.finished) return;
    const error = this.toError(err);
    this.failure = error;
    this.finish();
    this.tellError(error, (thrown) => this.mux.warn(thrown));
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.signal?.removeEventListener('abort', this);
    this.call?.leave(this, this.id);
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
