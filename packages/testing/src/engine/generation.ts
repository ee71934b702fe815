/**
 * One running generation of the `tensorrt_llm` (or LLM-API) model: the pure generator of
 * GENERATOR.md, paced by ttft/itl, stoppable in-band, cancellable, and logged. A batch runs all its
 * items in the one generation, side by side, so they share its timing, stop, cancellation and log.
 */
import { TritonError } from '../errors.js';
import {
  type FinishReason,
  type GenerateOptions,
  SequenceGenerator,
  type SequenceStep,
  sequenceCount,
} from '../generator.js';
import type { EngineContext } from './context.js';
import { sleepUntil, yieldToIo } from './pace.js';
import type { Delivery, Protocol } from './request.js';

/** One batch item: what a request of its own would have asked for. */
export interface GenerationItem {
  readonly inputIds: readonly number[];
  readonly options: GenerateOptions;
}

export interface GenerationSpec {
  /** The generator model, as logged. */
  readonly model: string;
  readonly id: string;
  readonly protocol: Protocol;
  /** One per batch item (one for an unbatched request). */
  readonly items: readonly GenerationItem[];
  /** Whether an in-band `stop` request for this model and id ends it. */
  readonly stoppable: boolean;
  readonly errorAfterTokens: number | undefined;
  /** A client cancellation that reaches the generator (the raw models'); none for an ensemble's. */
  readonly signal: AbortSignal | undefined;
  /** When the outermost request arrived (`performance.now()`): the token schedule starts here. */
  readonly arrivalMs: number;
  /** The guide type the `received` event records (GENERATOR.md "Event log"). */
  readonly guide?: string | undefined;
}

/** A token of sequence `k` of batch item `item`; `last` when the sequence ends with it (and why). */
export interface TokenStep {
  readonly item: number;
  readonly k: number;
  readonly token: number;
  readonly logProb: number;
  readonly last: boolean;
  readonly reason: 'stop' | 'length' | undefined;
}

export type GenerationOutcome =
  | { readonly kind: 'completed' | 'stopped' | 'cancelled' | 'failed' }
  | { readonly kind: 'error'; readonly error: TritonError };

export interface SequenceState {
  readonly tokens: number[];
  readonly logProbs: number[];
  cumLogProb: number;
  reason: FinishReason | undefined;
}

/** Wall-clock time in nanoseconds since the epoch, as the perf-metric outputs report it. */
export function nowNs(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
}

/** When an item arrived and produced its first and last tokens (0 before it has any), in ns. */
export interface ItemTiming {
  readonly arrivalNs: bigint;
  readonly firstTokenNs: bigint;
  readonly lastTokenNs: bigint;
}

/** A sequence as the loop runs it: which item and index it is, and its state. */
interface Slot {
  readonly item: number;
  readonly k: number;
  readonly state: SequenceState;
}

export class Generation {
  /** The sequences of each batch item, by item then sequence index. */
  readonly items: readonly (readonly SequenceState[])[];
  readonly arrivalNs: bigint;
  private readonly arrivalMs: number;
  private readonly firstTokenNs: bigint[];
  private readonly lastTokenNs: bigint[];
  private readonly slots: readonly Slot[];
  private delivered = 0;
  private stopRequested = false;
  /** Wakes a generation waiting for its next token when a `stop` request reaches it. */
  private readonly stopWake: AbortController | undefined;
  private readonly spec: GenerationSpec;
  private readonly ctx: EngineContext;

  constructor(spec: GenerationSpec, ctx: EngineContext) {
    this.spec = spec;
    this.ctx = ctx;
    this.arrivalMs = spec.arrivalMs;
    this.arrivalNs = BigInt(Math.round((performance.timeOrigin + spec.arrivalMs) * 1000)) * 1000n;
    this.items = spec.items.map((item) =>
      Array.from({ length: sequenceCount(item.options) }, () => ({
        tokens: [],
        logProbs: [],
        cumLogProb: 0,
        reason: undefined,
      })),
    );
    this.slots = this.items.flatMap((seqs, item) => seqs.map((state, k) => ({ item, k, state })));
    this.firstTokenNs = this.items.map(() => 0n);
    this.lastTokenNs = this.items.map(() => 0n);
    this.stopWake = spec.stoppable ? new AbortController() : undefined;
  }

  /** The sequences of the first (for an unbatched request, the only) item. */
  get sequences(): readonly SequenceState[] {
    return this.items[0] ?? [];
  }

  timing(item: number): ItemTiming {
    return {
      arrivalNs: this.arrivalNs,
      firstTokenNs: this.firstTokenNs[item] ?? 0n,
      lastTokenNs: this.lastTokenNs[item] ?? 0n,
    };
  }

  /** Tokens produced so far, over all sequences of all items. */
  get tokenCount(): number {
    return this.delivered;
  }

  /** Runs to the end, handing each round (one token per live sequence) to `deliver`. */
  async run(deliver: (round: readonly TokenStep[]) => Promise<Delivery>): Promise<GenerationOutcome> {
    const { spec, ctx } = this;
    const log = (event: 'received' | 'completed' | 'cancelled' | 'stopped' | 'error') =>
      ctx.events.record({
        model: spec.model,
        id: spec.id,
        event,
        tokens: this.delivered,
        protocol: spec.protocol,
        ...(event === 'received' && spec.guide !== undefined ? { guide: spec.guide } : {}),
      });
    log('received');
    const unregister = spec.stoppable
      ? ctx.stops.register(spec.model, spec.id, () => {
          this.stopRequested = true;
          this.stopWake?.abort();
        })
      : undefined;
    try {
      const outcome = await this.loop(deliver);
      log(outcome.kind === 'failed' ? 'error' : outcome.kind === 'error' ? 'error' : outcome.kind);
      return outcome;
    } catch (err) {
      log('error');
      throw err;
    } finally {
      unregister?.();
    }
  }

  private cancelled(): boolean {
    return this.spec.signal?.aborted === true || this.ctx.activity.signal.aborted;
  }

  private endLive(pending: readonly SequenceStep[], reason: FinishReason): void {
    pending.forEach((p, i) => {
      const seq = this.slots[i]!.state;
      seq.reason = p.done ? p.reason : reason;
    });
  }

  private async loop(
    deliver: (round: readonly TokenStep[]) => Promise<Delivery>,
  ): Promise<GenerationOutcome> {
    const { spec, ctx } = this;
    const gens = this.slots.map(({ item, k }) => {
      const { inputIds, options } = spec.items[item]!;
      return new SequenceGenerator(inputIds, options, k);
    });
    // One step of lookahead tells whether a token is its sequence's last.
    const pending: SequenceStep[] = gens.map((g) => g.next());
    let due = this.arrivalMs;
    // What ends a wait between tokens early; the same for every token of the generation.
    const wakes = [spec.signal, ctx.activity.signal, this.stopWake?.signal];
    for (let round = 0; ; round++) {
      // A stop that arrived is answered before a cancel that came after it, as the real backend
      // does: the client that sent the stop may close its stream as soon as the stop is accepted.
      // A generation whose last token went out (with the final flag) has completed, whatever
      // the client does next.
      if (pending.every((p) => p.done)) {
        this.endLive(pending, 'stop');
        return { kind: 'completed' };
      }
      if (this.stopRequested) {
        this.endLive(pending, 'stopped');
        return { kind: 'stopped' };
      }
      if (this.cancelled()) {
        this.endLive(pending, 'cancelled');
        return { kind: 'cancelled' };
      }
      if (spec.errorAfterTokens !== undefined && this.delivered >= spec.errorAfterTokens) {
        this.endLive(pending, 'cancelled');
        const message = `fake-triton: injected error after ${this.delivered} tokens`;
        return { kind: 'error', error: new TritonError('INTERNAL', message) };
      }
      if (ctx.batchClock !== undefined) {
        if (round === 0 && ctx.ttftMs > 0) await sleepUntil(this.arrivalMs + ctx.ttftMs, wakes);
        await ctx.batchClock.next();
      } else {
        // Tokens are due on a fixed schedule from arrival, so timer lateness does not add up; a
        // reader that held us back (backpressure) restarts the schedule instead of getting a burst.
        const now = performance.now();
        due = round === 0 ? this.arrivalMs + ctx.ttftMs : Math.max(due + ctx.itlMs, now - ctx.itlMs);
        if (due > now) await sleepUntil(due, wakes);
        else if (round % ctx.tokensPerTurn === ctx.tokensPerTurn - 1) await yieldToIo();
      }
      if (this.stopRequested) {
        this.endLive(pending, 'stopped');
        return { kind: 'stopped' };
      }
      if (this.cancelled()) {
        this.endLive(pending, 'cancelled');
        return { kind: 'cancelled' };
      }
      const steps: TokenStep[] = [];
      const producedNs = nowNs();
      pending.forEach((p, i) => {
        if (p.done) return;
        const next = gens[i]!.next();
        pending[i] = next;
        const { item, k, state: seq } = this.slots[i]!;
        seq.tokens.push(p.token);
        seq.logProbs.push(p.logProb);
        seq.cumLogProb += p.logProb;
        if (this.firstTokenNs[item] === 0n) this.firstTokenNs[item] = producedNs;
        this.lastTokenNs[item] = producedNs;
        steps.push({
          item,
          k,
          token: p.token,
          logProb: p.logProb,
          last: next.done,
          reason: next.done ? next.reason : undefined,
        });
      });
      this.delivered += steps.length;
      const delivery = await deliver(steps);
      if (delivery !== 'ok') {
        this.endLive(pending, 'cancelled');
        return { kind: delivery };
      }
    }
  }
}
