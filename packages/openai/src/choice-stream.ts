import type { FinishReason, GenerateResult, StreamChunk } from '@trtllm/sdk';
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
import type { OpenAiFinishReason, OpenAiUsage } from './wire.js';

type Tagged = { readonly source: number; readonly value: StreamChunk };

/** A delta event. */
export type DeltaEvent = Extract<ChoiceEvent, { type: 'delta' }>;

/**
 * Where {@link ChoiceStream.run} puts the events of the choices. A method returns a promise only
 * when the caller must wait before reading on (a full socket); most calls return undefined, which
 * saves a promise and a microtask per token.
 */
export interface ChoiceSink {
  /** Read before each upstream piece is handled: true once the events have nowhere to go. */
  readonly stopped: boolean;
  delta(event: DeltaEvent): Promise<void> | undefined;
  finish(choice: number, reason: OpenAiFinishReason): Promise<void> | undefined;
  /** Closes the events once every job has ended. */
  usage(usage: OpenAiUsage): Promise<void> | undefined;
}

/**
 * Streams every job, interleaved as their tokens arrive. Each choice gets its deltas and then one
 * `finish`; a `usage` event closes the stream. {@link ChoiceStream.cancel}, or the caller's
 * signal, cancels every upstream request still running.
 */
export function streamChoices(ctx: ChoiceContext, jobs: readonly ChoiceJob[]): ChoiceStream {
  return new ChoiceStream(ctx, jobs);
}

/**
 * The choices of one streamed response, pushed into a {@link ChoiceSink} rather than read as an
 * async iterator: a token then costs the SDK stream's own promise and nothing more, where an
 * iterator of events adds a promise, a reaction and a result object per token, and two stacked
 * generators (merge, then choices) a resumption, an await and a yield each (issue 31). One request
 * (every `n` = 1 call) reads the SDK's stream directly, without the merge.
 */
export class ChoiceStream {
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
  /** Every job ended and the usage is given. */
  private completed = false;
  /** Nothing more will be read: completed, failed or cancelled. */
  private over = false;

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

  /**
   * Reads every job to its end into `sink`, then gives it the usage. Returns early, leaving the
   * jobs running, once the sink is stopped: {@link cancel} ends them. A failing job (or sink)
   * cancels the others and rejects.
   */
  async run(sink: ChoiceSink): Promise<void> {
    try {
      if (this.single !== undefined) {
        const source = this.single;
        for (;;) {
          const r = await source.next();
          if (sink.stopped) return;
          if (r.done === true) break;
          const full = this.take(0, r.value, sink);
          if (full !== undefined) await full;
        }
      } else {
        const source = this.merged!;
        for (;;) {
          const r = await source.next();
          if (sink.stopped) return;
          if (r.done === true) break;
          const full = this.take(r.value.source, r.value.value, sink);
          if (full !== undefined) await full;
        }
      }
      this.completed = true;
      this.close();
      const full = sink.usage(usageOf(this.usage));
      if (full !== undefined) await full;
    } catch (err) {
      this.close();
      throw err;
    }
  }

  /** Cancels whatever is still running upstream; does nothing once every job has ended. */
  cancel(): void {
    if (!this.over) {
      // Not awaited, as the merge does not await its sources: the abort below ends their reads.
      const source = this.single ?? this.merged!;
      void Promise.resolve(source.return?.()).catch(() => undefined);
    }
    this.close();
  }

  /** One upstream piece into the sink: a delta, or a job's end (its finishes). */
  private take(source: number, chunk: StreamChunk, sink: ChoiceSink): Promise<void> | undefined {
    const job = this.jobs[source]!;
    if (!chunk.done) {
      const lp = chunk.logProbs;
      if (lp === undefined || lp.length === 0) {
        // A piece with neither text nor log probs (a held-back partial character) is no event.
        if (chunk.text.length === 0) return undefined;
        return sink.delta({ type: 'delta', choice: job.firstChoice + chunk.sequenceIndex, text: chunk.text });
      }
      const logProbs = {
        tokens:
          serverTexts(chunk.logProbTokens, lp.length) ??
          tokenTexts(chunk.tokenIds, lp.length, this.ctx.tokenizer, chunk.text),
        logProbs: lp,
        ...alternativesOf(chunk.topLogProbs),
      };
      return sink.delta({
        type: 'delta',
        choice: job.firstChoice + chunk.sequenceIndex,
        text: chunk.text,
        logProbs,
      });
    }
    this.usage.push({
      prompt: promptTokens(job, chunk.usage.promptTokens, this.ctx.tokenizer),
      completion: completionTokens(chunk.result, this.ctx.tokenizer),
    });
    return this.finishJob(job, chunk.result, chunk.finishReason, sink);
  }

  /** The finish of each choice of an ended job, waiting only where the sink asks to. */
  private async finishJob(
    job: ChoiceJob,
    result: GenerateResult,
    reason: FinishReason,
    sink: ChoiceSink,
  ): Promise<void> {
    for (let k = 0; k < job.choiceCount; k++) {
      const seq = result.sequences.find((s) => s.index === k);
      const full = sink.finish(job.firstChoice + k, openAiFinishReason(seq?.finishReason ?? reason));
      if (full !== undefined) await full;
    }
  }

  private close(): void {
    if (this.over) return;
    this.over = true;
    if (this.inner === undefined) return;
    if (!this.completed) this.inner.abort();
    this.inner.dispose();
  }
}
