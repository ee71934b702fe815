import { TritonLlmError } from './errors.js';
import type { Generation } from './generation.js';
import type { GenerateResult, StreamChunk } from './result.js';
import type { RequestTelemetry } from './telemetry-request.js';

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
  private stopRequested = false;
  private readonly starting: Promise<Generation>;

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
    return this.starting.then((g) => {
      const first = g[Symbol.asyncIterator]();
      this.inner = first;
      // A failure before the request is sent (an already aborted signal) has no error event.
      return this.telemetry !== undefined ? this.telemetry.track(first.next()) : first.next();
    });
  }

  async return(): Promise<IteratorResult<StreamChunk>> {
    const inner = this.inner;
    if (inner === undefined) {
      // Left before the first chunk: the request may already be on its way.
      const g = await this.starting.catch(() => undefined);
      if (g !== undefined) await g[Symbol.asyncIterator]().return?.();
      this.telemetry?.abandon();
      return { done: true, value: undefined };
    }
    const done = (await inner.return?.()) ?? { done: true as const, value: undefined };
    this.telemetry?.abandon();
    return done;
  }
}
