import { type InferRequest, type InferResponse, type InferStream, TritonLlmError } from '@trtllm/sdk';
import { toTritonLlmError } from './errors.js';
import type { ModelInferResponse, ModelStreamInferResponse } from './gen/inference/grpc_service_pb.js';
import { type ModelInferRequestInit, toModelInferRequest } from './infer-request.js';
import { fromModelInferResponse } from './infer-response.js';
import { RequestQueue } from './request-queue.js';
import { streamErrorFromMessage } from './stream-error.js';

/** Starts one `ModelStreamInfer` call that sends `requests` and is cancelled by `signal`. */
export type OpenStreamCall = (
  requests: AsyncIterable<ModelInferRequestInit>,
  signal: AbortSignal,
) => AsyncIterable<ModelStreamInferResponse>;

// Without it a decoupled model that ends without data sends nothing, and the end of a request
// cannot be told (tensorrtllm_backend #552); with it every request ends on a flagged response.
export const STREAM_PARAMETERS = { triton_enable_empty_final_response: true } as const;

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/** Creates the stream of one request on its own call; the call opens on first use. */
export function createInferStream(
  request: InferRequest,
  callerSignal: AbortSignal | undefined,
  open: OpenStreamCall,
): InferStream {
  return new GrpcInferStream(request, callerSignal, open);
}

/**
 * One request on one `ModelStreamInfer` call, because cancelling a call cancels every request on
 * it. Pull-based: a response is read from the call only when the consumer asks for one.
 *
 * A stop request shares the main request's id and gets its own empty final response, so after
 * `sendStop` the stream waits for two final-flagged responses and reports only the last as final.
 */
class GrpcInferStream implements InferStream {
  private readonly controller = new AbortController();
  private readonly requests = new RequestQueue<ModelInferRequestInit>();
  private responses: AsyncIterator<ModelStreamInferResponse> | undefined;
  private phase: 'idle' | 'running' | 'ending' | 'done' = 'idle';
  private iterated = false;
  private stopSent = false;
  private finalsExpected = 1;
  private finalsSeen = 0;
  private readonly onCallerAbort = (): void => this.controller.abort();

  constructor(
    private readonly request: InferRequest,
    private readonly callerSignal: AbortSignal | undefined,
    private readonly open: OpenStreamCall,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<InferResponse> {
    if (this.iterated) {
      throw new TritonLlmError('failed_precondition', 'an InferStream can be iterated only once', {
        model: this.request.model,
        requestId: this.request.id,
      });
    }
    this.iterated = true;
    return { next: () => this.next(), return: () => this.return() };
  }

  async sendStop(stop: InferRequest): Promise<void> {
    try {
      if (this.phase === 'idle') this.start();
      // Once the main request has its final response there is nothing left to stop.
      if (this.phase !== 'running' || this.stopSent) return;
      const message = toModelInferRequest(stop, STREAM_PARAMETERS);
      this.stopSent = true;
      this.finalsExpected += 1;
      this.requests.push(message);
    } catch (err) {
      throw this.toError(err);
    }
  }

  private start(): void {
    if (this.callerSignal?.aborted === true) throw this.toError(this.callerSignal.reason);
    const first = toModelInferRequest(this.request, STREAM_PARAMETERS);
    this.responses = this.open(this.requests, this.controller.signal)[Symbol.asyncIterator]();
    this.callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.requests.push(first);
    this.phase = 'running';
  }

  private async next(): Promise<IteratorResult<InferResponse>> {
    try {
      if (this.phase === 'idle') this.start();
      if (this.phase === 'ending') {
        await this.drain();
        return DONE;
      }
      const responses = this.responses;
      if (this.phase === 'done' || responses === undefined) return DONE;
      for (;;) {
        const r = await responses.next();
        if (r.done === true) {
          throw new TritonLlmError(
            'protocol',
            `ModelStreamInfer '${this.request.model}': the call ended before the final response of request '${this.request.id}'`,
          );
        }
        const response = this.accept(r.value);
        if (response !== undefined) return { done: false, value: response };
      }
    } catch (err) {
      this.cancel();
      throw this.toError(err);
    }
  }

  private async return(): Promise<IteratorResult<InferResponse>> {
    if (this.phase === 'ending') {
      try {
        await this.drain();
      } catch (err) {
        throw this.toError(err);
      }
    } else {
      // The consumer left early: cancelling the call is what tells the server to stop.
      this.cancel();
    }
    return DONE;
  }

  /** The response to hand to the consumer, or undefined for one it must not see. */
  private accept(message: ModelStreamInferResponse): InferResponse | undefined {
    if (message.errorMessage !== '') {
      throw streamErrorFromMessage(message.errorMessage, {
        model: this.request.model,
        requestId: this.request.id,
      });
    }
    const r = message.inferResponse;
    if (r === undefined) {
      throw new TritonLlmError(
        'protocol',
        `ModelStreamInfer '${this.request.model}': a stream message with neither a response nor an error`,
      );
    }
    if (!isFinal(r)) return fromModelInferResponse(r, false);
    this.finalsSeen += 1;
    if (this.finalsSeen < this.finalsExpected) {
      // Either the stop request's empty final or the main request's last data: only data is news.
      return r.outputs.length > 0 ? fromModelInferResponse(r, false) : undefined;
    }
    this.phase = 'ending';
    return fromModelInferResponse(r, true);
  }

  /** Half-closes the call after the last final and waits for the server to end it. */
  private async drain(): Promise<void> {
    this.requests.close();
    const responses = this.responses;
    try {
      // Messages after the last final belong to no request of this stream.
      while (responses !== undefined && (await responses.next()).done !== true);
    } finally {
      this.finish();
    }
  }

  private cancel(): void {
    if (this.phase === 'done') return;
    this.controller.abort();
    this.requests.close();
    this.finish();
  }

  private finish(): void {
    this.phase = 'done';
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private toError(err: unknown): TritonLlmError {
    return toTritonLlmError(err, {
      method: 'ModelStreamInfer',
      model: this.request.model,
      requestId: this.request.id,
      signal: this.callerSignal,
    });
  }
}

/** Whether a streamed response carries `triton_final_response: true`. */
export function isFinal(r: ModelInferResponse): boolean {
  const p = r.parameters.triton_final_response?.parameterChoice;
  return p?.case === 'boolParam' && p.value;
}
