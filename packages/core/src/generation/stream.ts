import { TritonLlmError } from '../errors.js';
import type { GenerateResult, StreamChunk } from '../result.js';
import type { RequestTelemetry } from '../telemetry/request.js';
import type { Generation } from './generation.js';

/** A running streamed request: iterate it for chunks; `stop()` ends it gracefully. */
export interface GenerationStream extends AsyncIterable<StreamChunk> {
  readonly requestId: string;
  /** Graceful early stop: the backend's in-band stop where the model has one (see the README table). */
  stop(): Promise<void>;
}

/** Iterates a generation to its end and returns its result. */
export async function collect(generation: Generation, model: string): Promise<GenerateResult> {
  let result: GenerateResult | undefined;
  for await (const chunk of generation) if (chunk.done) result = chunk.result;
  if (result === undefined) {
    throw new TritonLlmError('protocol', 'the request ended without a result', {
      requestId: generation.requestId,
      model,
    });
  }
  return result;
}

/**
 * What `stream()` returns: the request starts at once (schema, encoding), and iteration hands out
 * the generation's chunks. A class rather than closures: an idle stream costs one small object.
 */
export class StartedStream implements GenerationStream, AsyncIterator<StreamChunk> {
  private generation: Generation | undefined;
  private inner: AsyncIterator<StreamChunk> | undefined;
  private opening: Promise<AsyncIterator<StreamChunk>> | undefined;
  private stopRequested = false;
  /** The start of the generation, until its iterator is open (then both promises go). */
  private starting: Promise<Generation> | undefined;

  constructor(
    readonly requestId: string,
    started: Promise<Generation>,
    private readonly telemetry: RequestTelemetry | undefined,
  ) {
    this.starting = started.then((g) => {
      this.generation = g;
      if (this.stopRequested) void g.stop();
      return g;
    });
    // Keep an unconsumed failure from becoming an unhandled rejection; iteration rethrows it.
    this.starting.catch((err: unknown) => telemetry?.fail(err));
  }

  async stop(): Promise<void> {
    this.stopRequested = true;
    await this.generation?.stop();
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamChunk> {
    return this;
  }

  next(): Promise<IteratorResult<StreamChunk>> {
    const inner = this.inner;
    if (inner !== undefined) return inner.next();
    const first = this.opening === undefined;
    return this.iterator().then((it) =>
      // A failure before the request is sent (an already aborted signal) has no error event.
      first && this.telemetry !== undefined ? this.telemetry.track(it.next()) : it.next(),
    );
  }

  async return(): Promise<IteratorResult<StreamChunk>> {
    if (this.inner === undefined) {
      // Left before the first chunk: the request may already be on its way.
      const it = await this.iterator().catch(() => undefined);
      if (it !== undefined) await it.return?.();
      this.telemetry?.abandon();
      return { done: true, value: undefined };
    }
    const done = (await this.inner.return?.()) ?? { done: true as const, value: undefined };
    this.telemetry?.abandon();
    return done;
  }

  /**
   * The generation's iterator, asked for once: calls that come before the request has started
   * (two next() at once, a return() then a next()) all get the same one, in order.
   */
  private iterator(): Promise<AsyncIterator<StreamChunk>> {
    if (this.opening !== undefined) return this.opening;
    const opening = this.starting!.then((g) => {
      const inner = g[Symbol.asyncIterator]();
      // From here every call goes to the iterator: a stream that waits for thousands of tokens
      // need not keep the settled promises that led to it.
      this.inner = inner;
      this.opening = undefined;
      this.starting = undefined;
      return inner;
    });
    this.opening = opening;
    return opening;
  }
}
