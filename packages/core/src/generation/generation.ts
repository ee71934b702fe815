import { now } from '../clock.js';
import { TritonLlmError } from '../errors.js';
import { type DecodeWants, decodeResponse, decodeWants } from '../models/decode-response.js';
import type { DeltaChunk, FinalChunk, GenerateResult, Logits, PerfMetrics, StreamChunk } from '../result.js';
import type { InferResponse, InferSink, InferStream } from '../transport.js';
import { generationResult } from './build-result.js';
import { withIdleTimeout } from './idle-timeout.js';
import type { GenerationContext, WireContext } from './options.js';
import { roomForOne, SequenceTracker } from './sequences.js';
import { GenerationWire } from './wire.js';

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * One running request. Iterating it yields the chunks; `stop()` asks the backend for a graceful
 * early stop. The policy of the SDK lives here, once for every transport: text deltas, held-back
 * incomplete characters, client-side stop sequences, finish reasons, timings, early-stop reports.
 *
 * It is its own iterator, written as a small state machine rather than an async generator: a
 * delivered chunk costs the transport's promise and one reaction, and the chunks of one response
 * wait in a queue that `next()` hands out without reading again.
 *
 * It reads; its {@link GenerationWire} owns the attempts on the transport, their cancellation and
 * an early end. The state a response touches (the queue, the sequences, the timings, the open
 * attempt's responses) is kept here, so that a token costs no call into the wire.
 */
export class Generation implements AsyncIterable<StreamChunk>, AsyncIterator<StreamChunk>, InferSink {
  readonly requestId: string;
  private readonly wire: GenerationWire;
  /** The generation's context, the same object its wire reads. */
  private readonly ctx: WireContext;
  /** The open attempt's responses; `undefined` before the first attempt and while one waits to retry. */
  private source: AsyncIterator<InferResponse> | undefined;
  /**
   * The open attempt's stream when it is read by pulling (every stream without an idle timeout):
   * worked out once per attempt rather than for every read.
   */
  private pulled: InferStream | undefined;
  private readonly sequences: SequenceTracker;
  private readonly wants: DecodeWants;
  /** new: not iterated yet; running: reading responses; done: nothing more to read. */
  private phase: 'new' | 'running' | 'done' = 'new';
  private iterated = false;
  private responded = false;
  /** Chunks not handed out yet; room for one, the usual count (see {@link roomForOne}). */
  private readonly out: StreamChunk[] = roomForOne();
  private outHead = 0;
  private numInputTokens: number | undefined;
  private contextLogits: Logits | undefined;
  private perfMetrics: PerfMetrics | undefined;
  private started = 0;
  private firstAt: number | undefined;
  private lastAt: number | undefined;
  private gaps: number[] | undefined;
  private readonly promptTokens: number | undefined;
  /**
   * The handlers of a read from an iterated (not pulled) stream, made on first need: a pulled
   * stream, the usual path, never uses them, and each is a closure kept per request.
   */
  private onResult:
    | ((
        r: IteratorResult<InferResponse>,
      ) => Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk>)
    | undefined;
  /** The consumer's pending `next()`, while a pulled stream (`InferStream.pull`) has not answered. */
  private resolveRead: ((r: IteratorResult<StreamChunk>) => void) | undefined;
  /** The promise `resolveRead` settles. */
  private pushed: Promise<IteratorResult<StreamChunk>> | undefined;
  private rejectRead: ((e: unknown) => void) | undefined;
  private onReadError:
    | ((err: unknown) => Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk>)
    | undefined;
  /** Ends the request at its idle timeout; made on first need, then shared by every read. */
  private expireIdle: (() => Promise<void>) | undefined;

  constructor(context: GenerationContext) {
    const { encoded } = context;
    // Every field present, so that the object has one fixed shape (see WireContext).
    const ctx: WireContext = {
      transport: context.transport,
      schema: context.schema,
      request: context.request,
      streaming: context.streaming,
      tokenizer: context.tokenizer,
      options: context.options,
      retry: context.retry,
      warnServerKeepsGenerating: context.warnServerKeepsGenerating,
      observe: context.observe,
      unary: context.unary,
    };
    this.ctx = ctx;
    this.wire = new GenerationWire(ctx, encoded);
    this.requestId = this.wire.requestId;
    this.promptTokens = encoded.promptIds?.length;
    const { request } = ctx;
    this.sequences = new SequenceTracker(
      ctx.schema,
      request,
      encoded,
      ctx.tokenizer,
      ctx.streaming,
      this.requestId,
    );
    this.wants = decodeWants(request);
  }

  /**
   * Ends the request early but gracefully: models with the in-band `stop` input (raw and LLM-API)
   * finish with what they generated and finish reason `stopped`; for ensemble and BLS, which have no
   * such input, the call is cancelled and the result says the server keeps generating.
   */
  async stop(): Promise<void> {
    const { wire } = this;
    if (wire.finished || wire.early !== undefined) return;
    await wire.endEarly('stop');
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamChunk> {
    if (this.iterated)
      throw new TritonLlmError('failed_precondition', 'a generation can be iterated only once');
    this.iterated = true;
    return this;
  }

  next(): Promise<IteratorResult<StreamChunk>> {
    // A next() while a pushed read is unanswered (the protocol allows it) waits for that one: the
    // stream has a single sink slot.
    if (this.resolveRead !== undefined) {
      const again = (): Promise<IteratorResult<StreamChunk>> => this.next();
      return this.pushed!.then(again, again);
    }
    if (this.outHead < this.out.length) {
      const queued = this.take();
      if (queued !== undefined) return Promise.resolve(queued);
    }
    if (this.phase === 'done') return Promise.resolve(DONE);
    if (this.phase === 'new') {
      const refused = this.begin();
      if (refused !== undefined) return Promise.reject(refused);
    }
    return this.read();
  }

  /** The consumer left the loop (break / return / throw): cancel on the wire unless it is over. */
  return(): Promise<IteratorResult<StreamChunk>> {
    const phase = this.phase;
    this.phase = 'done';
    this.out.length = 0;
    this.outHead = 0;
    if (phase === 'new') return Promise.resolve(DONE);
    const { wire } = this;
    wire.release();
    if (wire.finished) return Promise.resolve(DONE);
    // An early end already under way (an abort sending the in-band stop) finishes first, so the
    // server hears the stop before the connection closes, as it did when the abort came alone.
    return wire.endEarly('break').then(() => {
      wire.close();
      return DONE;
    });
  }

  /** Starts the request; returns the error when it must not be sent at all. */
  private begin(): unknown {
    const { ctx } = this;
    const { schema, options } = ctx;
    this.phase = 'running';
    this.started = now();
    if (options.signal?.aborted) {
      this.phase = 'done';
      return new TritonLlmError('cancelled', 'the request was aborted before it was sent', {
        requestId: this.requestId,
        model: schema.model,
      });
    }
    this.wire.start();
    ctx.observe?.({
      type: 'request',
      requestId: this.requestId,
      model: schema.model,
      streaming: ctx.streaming,
    });
    return undefined;
  }

  /** Reads the next response and turns it into chunks (or the end, or an error). */
  private read(): Promise<IteratorResult<StreamChunk>> {
    let source = this.source;
    if (source === undefined) {
      try {
        source = this.openAttempt();
      } catch (err) {
        return Promise.resolve(this.failed(err));
      }
    }
    const pulled = this.pulled;
    if (pulled !== undefined) {
      // Push mode: the stream hands the next response to this generation's sink methods, and the
      // consumer's promise is settled from there (one promise per chunk).
      this.pushed = new Promise((resolve, reject) => {
        this.resolveRead = resolve;
        this.rejectRead = reject;
        pulled.pull(this);
      });
      return this.pushed;
    }
    const pending = source.next();
    const idleMs = this.ctx.options.idleTimeoutMs;
    const guarded =
      idleMs === undefined
        ? pending
        : withIdleTimeout(pending, idleMs, this.idleExpiry(), this.requestId, this.ctx.schema.model);
    this.onResult ??= (r) => this.result(r.done === true ? undefined : r.value);
    this.onReadError ??= (err) => this.readFailed(err);
    return guarded.then(this.onResult, this.onReadError);
  }

  /** Opens an attempt on the wire and keeps what reading it needs. */
  private openAttempt(): AsyncIterator<InferResponse> {
    const source = this.wire.open();
    const stream = this.wire.stream;
    this.source = source;
    this.pulled = this.ctx.options.idleTimeoutMs === undefined ? stream : undefined;
    return source;
  }

  /** What ends the request at its idle timeout, made once for all its reads. */
  private idleExpiry(): () => Promise<void> {
    const { wire } = this;
    this.expireIdle ??= () => wire.endEarly('idle_timeout');
    return this.expireIdle;
  }

  // The sink methods take the pending read's resolvers before the answer is worked out: working it
  // out may start the next read (a response that brought no chunk), which sets its own.

  /** @internal The pulled stream's next response (see {@link InferSink}). */
  onResponse(response: InferResponse): void {
    const resolve = this.resolveRead;
    const reject = this.rejectRead;
    this.resolveRead = undefined;
    this.rejectRead = undefined;
    settle(this.result(response), resolve, reject);
  }

  /** @internal The pulled stream ended. */
  onEnd(): void {
    const resolve = this.resolveRead;
    const reject = this.rejectRead;
    this.resolveRead = undefined;
    this.rejectRead = undefined;
    settle(this.result(undefined), resolve, reject);
  }

  /** @internal The pulled stream failed. */
  onError(error: unknown): void {
    const resolve = this.resolveRead;
    const reject = this.rejectRead;
    this.resolveRead = undefined;
    this.rejectRead = undefined;
    settle(this.readFailed(error), resolve, reject);
  }

  /** One answer of the transport: a response, or (undefined) the end of the stream. */
  private result(
    response: InferResponse | undefined,
  ): Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk> {
    try {
      if (this.phase === 'done') return this.take() ?? DONE;
      if (response === undefined) {
        this.wire.sourceDone();
        this.ending();
        return this.take() ?? DONE;
      }
      if (!this.responded) {
        this.responded = true;
        this.wire.answered();
      }
      const at = now();
      const { ctx } = this;
      ctx.observe?.({
        type: 'response',
        requestId: this.requestId,
        model: ctx.schema.model,
        elapsedMs: at - this.started,
      });
      const queued = this.out.length;
      // Tokens that arrive after the caller's abort are not the caller's: they are neither handed
      // out nor counted in the result, which keeps what the consumer saw.
      if (this.ctx.options.signal?.aborted !== true) this.absorb(response);
      if (this.out.length > queued) {
        if (this.firstAt === undefined) this.firstAt = at;
        else if (this.lastAt !== undefined) {
          this.gaps ??= [];
          this.gaps.push(at - this.lastAt);
        }
        this.lastAt = at;
      }
      if (this.sequences.allMatchedStop) {
        const { wire } = this;
        if (wire.early === undefined && wire.mustEndAtMatch(response, this.sequences.outputAfterMatch)) {
          return wire.endEarly('stop_sequence').then(() => {
            // With an in-band stop the stream still delivers its final response; without one the call is gone.
            if (!wire.stoppedInBand() && this.phase !== 'done') this.ending();
            return this.continue();
          });
        }
      }
      return this.continue();
    } catch (err) {
      return this.failed(err);
    }
  }

  /** The next queued chunk, or another read when the last response brought none. */
  private continue(): Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk> {
    const queued = this.take();
    if (queued !== undefined) return queued;
    if (this.phase === 'done') return DONE;
    return this.read();
  }

  /**
   * The next queued chunk, or `undefined` when none is left. Once the caller's signal has fired no
   * delta is handed out, whatever was queued before (the other chunks of one response, text held
   * back until the end): issue 53 saw one delivered after abort() over HTTP, read while the in-band
   * stop was on its way. Only the final chunk, which says the request was cancelled, still goes.
   * Every chunk leaves through here, so this is the one place that rule lives.
   */
  private take(): IteratorResult<StreamChunk> | undefined {
    const aborted = this.ctx.options.signal?.aborted === true;
    while (this.outHead < this.out.length) {
      const value = this.out[this.outHead]!;
      this.outHead += 1;
      if (this.outHead === this.out.length) {
        // Emptied by pops: `length = 0` would drop the backing store, and the next response's push
        // would allocate another (about 150 bytes per streamed token).
        while (this.out.length > 0) this.out.pop();
        this.outHead = 0;
      }
      if (!aborted || value.done) return { done: false, value };
    }
    return undefined;
  }

  /** A failed read: retried when nothing was delivered yet and the policy allows, else the end. */
  private readFailed(err: unknown): Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk> {
    const { wire } = this;
    wire.sourceDone();
    if (this.responded || this.phase === 'done') return this.failed(err);
    const delayMs = wire.retryDelay(err);
    if (delayMs === undefined) return this.failed(wire.exhausted(err));
    this.source = undefined;
    this.pulled = undefined;
    return wire.waitToRetry(delayMs).then(
      () => {
        if (wire.early !== undefined) return this.failed(wire.endedWhileWaiting());
        return this.read();
      },
      (e: unknown) => this.failed(e),
    );
  }

  /**
   * The request ended in an error. Our own cancellation (abort, stop without an in-band path, stop
   * sequence) ends it normally: what was delivered stays delivered and the final chunk says why.
   */
  private failed(err: unknown): Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk> {
    const { wire } = this;
    const { schema } = this.ctx;
    const error = TritonLlmError.from(err, 'unknown');
    const early = wire.early;
    if (early !== undefined && error.code === 'cancelled' && early.trigger !== 'idle_timeout') {
      if (!wire.finished) this.ending();
      return this.take() ?? DONE;
    }
    if (error.code === 'deadline_exceeded') wire.deadlineExceeded();
    const report = wire.report();
    const wrapped = error
      .withContext({
        requestId: this.requestId,
        model: schema.model,
        ...(report !== undefined ? { earlyStop: report } : {}),
      })
      .forOperation(this.ctx.streaming ? 'stream' : 'generate', schema.model);
    this.ctx.observe?.({ type: 'error', requestId: this.requestId, model: schema.model, error: wrapped });
    this.phase = 'done';
    wire.release();
    // The request is ended on the wire before its error surfaces.
    const ending = !wire.finished && wire.early === undefined ? wire.endEarly('break') : Promise.resolve();
    return ending.then(() => {
      wire.close();
      throw wrapped;
    });
  }

  /** Queues the held-back text, then the final chunk with the whole result; nothing is read after. */
  private ending(): void {
    this.sequences.flush(this.out as DeltaChunk[]);
    this.wire.finish();
    this.phase = 'done';
    const result = this.buildResult();
    this.ctx.observe?.({ type: 'end', requestId: this.requestId, model: this.ctx.schema.model, result });
    const final: FinalChunk = {
      done: true,
      requestId: this.requestId,
      text: '',
      finishReason: result.finishReason,
      usage: result.usage,
      timings: result.timings,
      result,
    };
    this.out.push(final);
    this.wire.close();
  }

  private absorb(response: InferResponse): void {
    const decoded = decodeResponse(response, this.ctx.schema, this.wants);
    if (decoded.numInputTokens !== undefined) this.numInputTokens = decoded.numInputTokens;
    if (decoded.contextLogits !== undefined) this.contextLogits = decoded.contextLogits;
    if (decoded.perfMetrics !== undefined) this.perfMetrics = decoded.perfMetrics;
    this.sequences.absorb(decoded, this.out as DeltaChunk[]);
  }

  private buildResult(): GenerateResult {
    const earlyFinish = this.wire.earlyFinish();
    return generationResult({
      requestId: this.requestId,
      model: this.ctx.schema.model,
      sequences: this.sequences.results(earlyFinish),
      earlyFinish,
      promptTokens: this.numInputTokens ?? this.promptTokens,
      timings: {
        ...(this.firstAt !== undefined ? { timeToFirstTokenMs: this.firstAt - this.started } : {}),
        interTokenMs: this.gaps ?? [],
        totalMs: now() - this.started,
      },
      contextLogits: this.contextLogits,
      perfMetrics: this.perfMetrics,
      earlyStop: this.wire.report(),
    });
  }
}

/** Hands a read's outcome, a value or a promise of one, to the consumer's pending `next()`. */
function settle(
  out: Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk>,
  resolve: ((r: IteratorResult<StreamChunk>) => void) | undefined,
  reject: ((e: unknown) => void) | undefined,
): void {
  if (resolve === undefined || reject === undefined) return;
  if (out instanceof Promise) out.then(resolve, reject);
  else resolve(out);
}
