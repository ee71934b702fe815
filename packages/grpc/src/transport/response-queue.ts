import { type InferResponse, TritonLlmError } from '@trtllm/sdk';
import type { InferSink } from '@trtllm/sdk/transport';

export const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/** Queues up to this long keep their backing store when emptied (a 32-token request's worth). */
const SHORT_QUEUE = 32;

/**
 * The consumer's side of a streamed request, shared by the stream on its own HTTP/2 stream
 * (`call-stream.ts`) and the one on a shared call (`shared-calls.ts`): responses that arrive while
 * nobody waits are queued; the consumer pulls them in order (`pull` for the client's generation,
 * `next()` for `for await`), and a failure reaches it after the responses that came before it.
 * Subclasses decide when the stream starts and ends; the queue costs no allocation per response
 * beyond the array slot.
 */
export abstract class ResponseQueue implements AsyncIterator<InferResponse> {
  // Room for one from the start: the first push into `[]` reserves 17 slots, which the pops that
  // empty a short queue keep, and a queue rarely holds more than one response.
  private readonly queue: InferResponse[] = [undefined as unknown as InferResponse];
  private head = 0;
  private iterated = false;
  /** Who waits for the next event: the client's generation (pull) or an adapter of `next()`. */
  protected waiter: InferSink | undefined;
  protected failure: TritonLlmError | undefined;

  constructor(
    protected readonly model: string,
    protected readonly id: string,
  ) {
    this.queue.pop();
  }

  /** Hands the next event to `sink`: at once when it is known, else when it arrives. */
  abstract pull(sink: InferSink): void;

  abstract return(): Promise<IteratorResult<InferResponse>>;

  [Symbol.asyncIterator](): AsyncIterator<InferResponse> {
    if (this.iterated) {
      throw new TritonLlmError('failed_precondition', 'an InferStream can be iterated only once', {
        model: this.model,
        requestId: this.id,
      });
    }
    this.iterated = true;
    return this;
  }

  next(): Promise<IteratorResult<InferResponse>> {
    return new Promise((resolve, reject) =>
      this.pull({
        onResponse: (value) => resolve({ done: false, value }),
        onEnd: () => resolve(DONE),
        onError: reject,
      }),
    );
  }

  /** Responses waiting for the consumer. */
  protected get queued(): number {
    return this.queue.length - this.head;
  }

  /** The oldest queued response (call only when `queued > 0`). */
  protected dequeue(): InferResponse {
    const value = this.queue[this.head]!;
    this.queue[this.head++] = undefined as unknown as InferResponse;
    if (this.head === this.queue.length) {
      // A short queue is emptied by pops, which keep its backing store for the next response
      // (`length = 0` drops it, and the next push allocates one); a long one is let go.
      if (this.head > SHORT_QUEUE) this.queue.length = 0;
      else while (this.queue.length > 0) this.queue.pop();
      this.head = 0;
    }
    return value;
  }

  /** Hands `response` to the waiting consumer when nothing is queued before it; else queues it. */
  protected handOn(response: InferResponse): void {
    const waiter = this.waiter;
    if (waiter !== undefined && this.head === this.queue.length) {
      this.waiter = undefined;
      waiter.onResponse(response);
      return;
    }
    this.queue.push(response);
  }

  /** Tells the waiting consumer (if any) of `error`; what it throws goes to `onThrow`. */
  protected tellError(error: TritonLlmError, onThrow: (err: unknown) => void): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    try {
      waiter?.onError(error);
    } catch (err) {
      onThrow(err);
    }
  }
}

/** The log line for a consumer that threw while told of a failure (from a timer or a signal). */
export function consumerThrew(err: unknown): string {
  return `@trtllm/grpc: a stream's consumer threw while it was told of a failure: ${String(err)}`;
}
