/**
 * `ModelStreamInfer`: many requests per call, responses matched by id, `triton_final_response` on
 * each, per-request errors as `error_message`, and cancellation of the call cancelling them all.
 */
import { setMaxListeners } from 'node:events';
import type { ServerDuplexStream } from '@grpc/grpc-js';
import { findTarget, prepareRequest } from '../engine/admit.js';
import type { EngineContext } from '../engine/context.js';
import { execute } from '../engine/execute.js';
import type { Delivery, InferenceRequest, ModelResponse, ResponseSink } from '../engine/request.js';
import { asTritonError, grpcStatusOf, type TritonError } from '../errors.js';
import { MODEL_VERSION } from '../models/repository.js';
import { withTraceparent } from '../trace-context.js';
import { MALFORMED_MESSAGE, ResponseEncoder } from './encode.js';
import { decodeInputs, inputHeaders, type ProtoInferRequest, requestParameters } from './request.js';

/** Ends the connection a call runs on (the drop fault) once what was sent has left. */
export type DropConnection = (call: { getPeer(): string }) => Promise<void>;

type StreamCall = ServerDuplexStream<ProtoInferRequest, Buffer>;

/** Writes to the call with backpressure; every request of the call shares it. */
class CallWriter {
  readonly abort = new AbortController();
  private ended = false;
  /** Settles when the last write has been handed to HTTP/2. */
  private lastWrite: Promise<void> = Promise.resolve();
  /** What requests held back by HTTP/2 flow control wait for (see drained()). */
  private drain: Promise<void> | undefined;
  private readonly call: StreamCall;

  constructor(call: StreamCall) {
    this.call = call;
    // Every live request of the call listens to its signal (generations waiting for their next
    // token, the text models), as many at once as the client multiplexes: not a leak.
    setMaxListeners(0, this.abort.signal);
    call.on('cancelled', () => this.abort.abort());
    // A reset stream reports an error too; it ends the call like a cancellation.
    call.on('error', () => this.abort.abort());
    call.on('close', () => this.abort.abort());
  }

  get open(): boolean {
    return !this.ended && !this.abort.signal.aborted;
  }

  async write(bytes: Buffer): Promise<Delivery> {
    if (!this.open) return 'cancelled';
    let written!: () => void;
    this.lastWrite = new Promise((resolve) => {
      written = resolve;
    });
    if (this.call.write(bytes, () => written())) return 'ok';
    await this.drained();
    return this.open ? 'ok' : 'cancelled';
  }

  /**
   * Settles on the call's next 'drain' (or when the call is gone). Every request of a multiplexed
   * call that is held back waits on the same promise: one listener per call, not one per request.
   */
  private drained(): Promise<void> {
    this.drain ??= new Promise<void>((resolve) => {
      const done = () => {
        this.call.off('drain', done);
        this.abort.signal.removeEventListener('abort', done);
        this.drain = undefined;
        resolve();
      };
      this.call.on('drain', done);
      this.abort.signal.addEventListener('abort', done, { once: true });
    });
    return this.drain;
  }

  /** Resolves once everything written so far has been handed to HTTP/2 (or the call is gone). */
  flushed(): Promise<void> {
    const signal = this.abort.signal;
    if (signal.aborted) return Promise.resolve();
    // The abort listener goes when the write settles first: a long call must not collect them.
    return new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      void this.lastWrite.then(done);
    });
  }

  /** Ends the call with OK. */
  end(): void {
    if (!this.open) return;
    this.ended = true;
    this.call.end();
  }

  /** Ends the call with an error status. */
  failCall(error: TritonError): void {
    if (!this.open) return;
    this.ended = true;
    this.call.emit(
      'error',
      Object.assign(new Error(error.message), { code: grpcStatusOf(error), details: error.message }),
    );
  }
}

export function handleStreamInfer(call: StreamCall, ctx: EngineContext, drop: DropConnection): void {
  const writer = new CallWriter(call);
  let reading = true;
  let inflight = 0;
  const settle = () => {
    inflight--;
    if (!reading && inflight === 0) writer.end();
  };

  call.on('data', (msg: ProtoInferRequest) => {
    inflight++;
    let req: InferenceRequest;
    let outputs: string[];
    try {
      outputs = (msg.outputs ?? []).map((o) => o.name);
      req = prepareRequest(findTarget(ctx, msg.model_name, msg.model_version), {
        protocol: 'grpc',
        id: msg.id,
        headers: inputHeaders(msg),
        decode: () => decodeInputs(msg, msg.model_name),
        parameters: requestParameters(msg),
        outputs,
      });
    } catch (err) {
      const error = asTritonError(err);
      if (error.override) return writer.failCall(error);
      // Triton's early errors carry only the request id besides the message.
      void writer.write(new ResponseEncoder('', '', msg.id).streamError(error.message, undefined));
      return settle();
    }
    const sink = streamSink(
      req,
      writer,
      async () => {
        await writer.flushed();
        await drop(call);
      },
      settle,
    );
    void execute(req, sink, withTraceparent(ctx, call.metadata.get('traceparent')[0]), outputs);
  });
  call.on('end', () => {
    reading = false;
    if (inflight === 0) writer.end();
  });
}

function streamSink(
  req: InferenceRequest,
  writer: CallWriter,
  dropConnection: () => Promise<void>,
  settle: () => void,
): ResponseSink {
  const emptyFinalWanted = req.parameters.get('triton_enable_empty_final_response') === true;
  const encoder = new ResponseEncoder(req.model.name, MODEL_VERSION, req.id);
  let delivered = 0;
  let finalSent = false;
  let over = false;
  const finish = () => {
    if (over) return;
    over = true;
    settle();
  };

  return {
    signal: writer.abort.signal,
    async send(r: ModelResponse): Promise<Delivery> {
      if (over || !writer.open) return 'cancelled';
      switch (req.faults.beforeResponse(delivered, r.tokens)) {
        case 'stall':
          await new Promise((resolve) =>
            writer.abort.signal.addEventListener('abort', resolve, { once: true }),
          );
          return 'cancelled';
        case 'drop':
          await dropConnection();
          return 'cancelled';
        case 'malformed':
          await writer.write(MALFORMED_MESSAGE);
          finish();
          return 'failed';
        default:
          break;
      }
      const final = r.final && !req.faults.omitFinal;
      finalSent ||= final;
      delivered += r.tokens;
      return writer.write(encoder.streamResponse(r.outputs, final));
    },
    complete() {
      if (over) return;
      if (req.faults.omitFinal) {
        finish();
        return writer.end();
      }
      if (!finalSent && req.model.decoupled && emptyFinalWanted) {
        void writer.write(encoder.streamResponse([], true));
      }
      finish();
    },
    fail(error: TritonError) {
      if (over) return;
      void writer.write(encoder.streamError(error.message, true));
      finish();
    },
  };
}
