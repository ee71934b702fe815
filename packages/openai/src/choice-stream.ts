import type { StreamChunk } from '@trtllm/sdk';
import {
  alternativesOf,
  type ChoiceContext,
  type ChoiceEvent,
  type ChoiceJob,
  completionTokens,
  linkedController,
  openAiFinishReason,
  promptTokens,
  serverTexts,
  tokenTexts,
  usageOf,
} from './choices.js';
import { mergeAsync } from './merge.js';

type Tagged = { readonly source: number; readonly value: StreamChunk };

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * Streams every job, interleaved as their tokens arrive. Each choice gets its deltas and then one
 * `finish`; a `usage` event closes the stream. `return()`, or the caller's signal, cancels every
 * upstream request still running.
 */
export function streamChoices(ctx: ChoiceContext, jobs: readonly ChoiceJob[]): ChoiceStream {
  return new ChoiceStream(ctx, jobs);
}

/**
 * The iterator of {@link streamChoices}, written by hand rather than as an async generator: one
 * request (every `n` = 1 call) reads the SDK's stream directly, so a token costs that stream's
 * promise and one reaction here, where two stacked generators (merge, then choices) cost a
 * resumption, an await and a yield each (issue 31).
 */
export class ChoiceStream implements AsyncIterator<ChoiceEvent, void, undefined> {
  /**
   * Cancels the merged jobs together (one failing, or the consumer leaving). One job needs none:
   * its own `return()` cancels it and the caller's signal reaches it directly, which saves an
   * AbortSignal (an EventTarget, costly in Node) and a listener per request.
   */
  private readonly inner: (AbortController & { dispose(): void }) | undefined;
  /** Set for one job: its stream, read without the merge. */
  private readonly single: AsyncIterator<StreamChunk> | undefined;
  private readonly merged: AsyncIterator<Tagged, void, undefined> | undefined;
  private readonly usage: { prompt: number; completion: number }[] = [];
  /** Events made together (a job's finishes, the usage) waiting for their `next()`. */
  private readonly queued: ChoiceEvent[] = [];
  /** Every job ended and the usage is queued. */
  private completed = false;
  /** Nothing more will be read: completed, failed or returned. */
  private over = false;
  private readonly onSingle = (r: IteratorResult<StreamChunk>) =>
    r.done === true ? this.end() : this.take(0, r.value);
  private readonly onMerged = (r: IteratorResult<Tagged, void>) =>
    r.done === true ? this.end() : this.take(r.value.source, r.value.value);
  private readonly onError = (err: unknown): never => {
    this.close();
    throw err;
  };

  constructor(
    private readonly ctx: ChoiceContext,
    private readonly jobs: readonly ChoiceJob[],
  ) {
    if (jobs.length === 1) {
      this.single = ctx.llm.stream(jobs[0]!.request, { signal: ctx.signal })[Symbol.asyncIterator]();
      return;
    }
    const inner = linkedController(ctx.signal);
    this.inner = inner;
    this.merged = mergeAsync<StreamChunk>(
      jobs.map((job) => ctx.llm.stream(job.request, { signal: inner.signal })),
    );
  }

  next(): Promise<IteratorResult<ChoiceEvent, void>> {
    const event = this.queued.shift();
    if (event !== undefined) return Promise.resolve({ done: false, value: event });
    if (this.over) return Promise.resolve(DONE);
    if (this.single !== undefined) return this.single.next().then(this.onSingle, this.onError);
    return this.merged!.next().then(this.onMerged, this.onError);
  }

  /** Leaves early: cancels whatever is still running upstream. */
  return(): Promise<IteratorResult<ChoiceEvent, void>> {
    this.queued.length = 0;
    if (!this.over) {
      // Not awaited, as the merge does not await its sources: the abort below ends their reads.
      const source = this.single ?? this.merged!;
      void Promise.resolve(source.return?.()).catch(() => undefined);
    }
    this.close();
    return Promise.resolve(DONE);
  }

  private take(
    source: number,
    chunk: StreamChunk,
  ): IteratorResult<ChoiceEvent> | Promise<IteratorResult<ChoiceEvent, void>> {
    const job = this.jobs[source]!;
    if (!chunk.done) {
      const lp = chunk.logProbs;
      if (lp === undefined || lp.length === 0) {
        // A piece with neither text nor log probs (a held-back partial character) is no event.
        if (chunk.text.length === 0) return this.next();
        return {
          done: false,
          value: { type: 'delta', choice: job.firstChoice + chunk.sequenceIndex, text: chunk.text },
        };
      }
      const logProbs = {
        tokens:
          serverTexts(chunk.logProbTokens, lp.length) ??
          tokenTexts(chunk.tokenIds, lp.length, this.ctx.tokenizer, chunk.text),
        logProbs: lp,
        ...alternativesOf(chunk.topLogProbs),
      };
      return {
        done: false,
        value: { type: 'delta', choice: job.firstChoice + chunk.sequenceIndex, text: chunk.text, logProbs },
      };
    }
    this.usage.push({
      prompt: promptTokens(job, chunk.usage.promptTokens, this.ctx.tokenizer),
      completion: completionTokens(chunk.result, this.ctx.tokenizer),
    });
    for (let k = 0; k < job.choiceCount; k++) {
      const seq = chunk.result.sequences.find((s) => s.index === k);
      this.queued.push({
        type: 'finish',
        choice: job.firstChoice + k,
        finishReason: openAiFinishReason(seq?.finishReason ?? chunk.finishReason),
      });
    }
    return this.next();
  }

  /** Every source ended: the usage closes the stream. */
  private end(): Promise<IteratorResult<ChoiceEvent, void>> {
    this.completed = true;
    this.close();
    this.queued.push({ type: 'usage', usage: usageOf(this.usage) });
    return this.next();
  }

  private close(): void {
    if (this.over) return;
    this.over = true;
    if (this.inner === undefined) return;
    if (!this.completed) this.inner.abort();
    this.inner.dispose();
  }
}
