import { type InferRequest, type InferResponse, type InferStream, TritonLlmError } from '@trtllm/sdk';
import { toTritonLlmError } from './errors.js';
import type { ModelInferResponse, ModelStreamInferResponse } from './gen/inference/grpc_service_pb.js';
import { type ModelInferRequestInit, toModelInferRequest } from './infer-request.js';
import { fromModelInferResponse } from './infer-response.js';
import { RequestQueue } from './request-queue.js';
import { isFinal, type OpenStreamCall, STREAM_PARAMETERS } from './stream.js';
import { streamErrorFromMessage } from './stream-error.js';

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/** What the shared call hands to one request: a response, or the error that ends it. */
type Delivery = { readonly message: ModelStreamInferResponse } | { readonly error: unknown };

/** The responses of one request on the shared call, queued until its consumer pulls them. */
class Channel {
  private readonly queue: Delivery[] = [];
  private wake: (() => void) | undefined;

  push(d: Delivery): void {
    this.queue.push(d);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async take(): Promise<Delivery> {
    for (;;) {
      const d = this.queue.shift();
      if (d !== undefined) return d;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}

interface SharedCall {
  readonly requests: RequestQueue<ModelInferRequestInit>;
  readonly controller: AbortController;
  readonly channels: Map<string, Channel>;
}

/**
 * Many requests on one `ModelStreamInfer` call, as Triton's own clients do: each stream costs an
 * entry in a map instead of an HTTP/2 stream and a chain of async generators, which is where a
 * per-request call spent most of its client CPU and memory (docs/PERFORMANCE.md).
 *
 * The price: cancelling a request can no longer cancel its call (that would cancel them all), so
 * a stream ended early only stops listening (`cancelsOnServer: false`; the client then uses the
 * model's in-band stop where there is one), and responses are buffered per request rather than
 * read on demand, since one slow reader must not stall the others.
 */
export class StreamMultiplexer {
  private call: SharedCall | undefined;
  private closed = false;

  constructor(private readonly open: OpenStreamCall) {}

  stream(request: InferRequest, signal: AbortSignal | undefined): InferStream {
    return new MultiplexedStream(this, request, signal);
  }

  /** Registers a request and sends it, opening the shared call if there is none. */
  attach(request: InferRequest, message: ModelInferRequestInit): { call: SharedCall; channel: Channel } {
    if (this.closed)
      throw new TritonLlmError('unavailable', 'this gRPC transport is closed', { retryable: false });
    const call = this.call ?? this.openCall();
    if (call.channels.has(request.id)) {
      throw new TritonLlmError(
        'invalid_argument',
        `requestId: '${request.id}' is already in flight on this connection; ids must be unique to tell responses apart`,
        { model: request.model, requestId: request.id },
      );
    }
    const channel = new Channel();
    call.channels.set(request.id, channel);
    call.requests.push(message);
    return { call, channel };
  }

  detach(call: SharedCall, id: string): void {
    call.channels.delete(id);
  }

  close(): void {
    this.closed = true;
    this.call?.controller.abort();
    this.call?.requests.close();
    this.call = undefined;
  }

  private openCall(): SharedCall {
    const call: SharedCall = {
      requests: new RequestQueue(),
      controller: new AbortController(),
      channels: new Map(),
    };
    this.call = call;
    void this.pump(call);
    return call;
  }

  private async pump(call: SharedCall): Promise<void> {
    let failure: unknown;
    try {
      for await (const message of this.open(call.requests, call.controller.signal))
        this.dispatch(call, message);
    } catch (err) {
      failure = err;
    }
    // The call is over: the next request opens a new one, and every request still waiting fails.
    if (this.call === call) this.call = undefined;
    const error =
      failure ??
      new TritonLlmError('protocol', 'ModelStreamInfer: the shared call ended with requests still open');
    for (const channel of call.channels.values()) channel.push({ error });
    call.channels.clear();
  }

  private dispatch(call: SharedCall, message: ModelStreamInferResponse): void {
    const id = message.inferResponse?.id;
    const channel = id !== undefined ? call.channels.get(id) : undefined;
    if (channel !== undefined) {
      channel.push({ message });
      return;
    }
    // An error Triton could not tie to a request id concerns every request on the call.
    if (message.errorMessage !== '' && (id === undefined || id === '')) {
      for (const c of call.channels.values()) c.push({ message });
    }
    // Anything else belongs to a request whose consumer already left: dropped.
  }
}

/** One request on the shared call. Iterates like the per-call stream; see {@link StreamMultiplexer}. */
class MultiplexedStream implements InferStream {
  readonly cancelsOnServer = false;
  private attached: { call: SharedCall; channel: Channel } | undefined;
  private iterated = false;
  private done = false;
  private finalsExpected = 1;
  private finalsSeen = 0;

  constructor(
    private readonly mux: StreamMultiplexer,
    private readonly request: InferRequest,
    private readonly signal: AbortSignal | undefined,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<InferResponse> {
    if (this.iterated) {
      throw new TritonLlmError('failed_precondition', 'an InferStream can be iterated only once', {
        model: this.request.model,
        requestId: this.request.id,
      });
    }
    this.iterated = true;
    return {
      next: () => this.next(),
      return: async () => {
        this.finish();
        return DONE;
      },
    };
  }

  async sendStop(stop: InferRequest): Promise<void> {
    const attached = this.attached ?? this.start();
    if (this.done) return;
    this.finalsExpected += 1;
    attached.call.requests.push(toModelInferRequest(stop, STREAM_PARAMETERS));
  }

  private start(): { call: SharedCall; channel: Channel } {
    if (this.signal?.aborted === true) throw this.toError(this.signal.reason);
    this.attached = this.mux.attach(this.request, toModelInferRequest(this.request, STREAM_PARAMETERS));
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
    return this.attached;
  }

  private readonly onAbort = (): void => {
    const attached = this.attached;
    if (attached === undefined || this.done) return;
    attached.channel.push({ error: this.signal?.reason ?? new TritonLlmError('cancelled', 'aborted') });
  };

  private async next(): Promise<IteratorResult<InferResponse>> {
    if (this.done) return DONE;
    try {
      const { channel } = this.attached ?? this.start();
      for (;;) {
        const delivery = await channel.take();
        if ('error' in delivery) throw delivery.error;
        const response = this.accept(delivery.message);
        if (response !== undefined) return { done: false, value: response };
      }
    } catch (err) {
      this.finish();
      throw this.toError(err);
    }
  }

  private accept(message: ModelStreamInferResponse): InferResponse | undefined {
    if (message.errorMessage !== '') {
      throw streamErrorFromMessage(message.errorMessage, {
        model: this.request.model,
        requestId: this.request.id,
      });
    }
    const r = message.inferResponse as ModelInferResponse;
    if (!isFinal(r)) return fromModelInferResponse(r, false);
    this.finalsSeen += 1;
    if (this.finalsSeen < this.finalsExpected) {
      return r.outputs.length > 0 ? fromModelInferResponse(r, false) : undefined;
    }
    this.finish();
    return fromModelInferResponse(r, true);
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.signal?.removeEventListener('abort', this.onAbort);
    if (this.attached !== undefined) this.mux.detach(this.attached.call, this.request.id);
  }

  private toError(err: unknown): TritonLlmError {
    return toTritonLlmError(err, {
      method: 'ModelStreamInfer',
      model: this.request.model,
      requestId: this.request.id,
      signal: this.signal,
    });
  }
}
