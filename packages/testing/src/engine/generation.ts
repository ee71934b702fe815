/**
 * One running generation of the `tensorrt_llm` (or LLM-API) model: the pure generator of
 * GENERATOR.md, paced by ttft/itl, stoppable in-band, cancellable, and logged.
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

export interface GenerationSpec {
  /** The generator model, as logged. */
  readonly model: string;
  readonly id: string;
  readonly protocol: Protocol;
  readonly inputIds: readonly number[];
  readonly options: GenerateOptions;
  /** Whether an in-band `stop` request for this model and id ends it. */
  readonly stoppable: boolean;
  readonly errorAfterTokens: number | undefined;
  /** A client cancellation that reaches the generator (the raw models'); none for an ensemble's. */
  readonly signal: AbortSignal | undefined;
}

/** A token of sequence `k`; `last` when the sequence ends with it (and why). */
export interface TokenStep {
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

// Back-to-back tokens (itl 0) still give I/O a turn this often.
const TOKENS_PER_YIELD = 64;

export class Generation {
  readonly sequences: SequenceState[];
  readonly arrivalNs = nowNs();
  private readonly arrivalMs = performance.now();
  firstTokenNs = 0n;
  lastTokenNs = 0n;
  private delivered = 0;
  private stopRequested = false;
  private readonly spec: GenerationSpec;
  private readonly ctx: EngineContext;

  constructor(spec: GenerationSpec, ctx: EngineContext) {
    this.spec = spec;
    this.ctx = ctx;
    this.sequences = Array.from({ length: sequenceCount(spec.options) }, () => ({
      tokens: [],
      logProbs: [],
      cumLogProb: 0,
      reason: undefined,
    }));
  }

  /** Tokens produced so far, over all sequences. */
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
      });
    log('received');
    const unregister = spec.stoppable
      ? ctx.stops.register(spec.model, spec.id, () => {
          this.stopRequested = true;
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
    pending.forEach((p, k) => {
      const seq = this.sequences[k]!;
      seq.reason = p.done ? p.reason : reason;
    });
  }

  private async loop(
    deliver: (round: readonly TokenStep[]) => Promise<Delivery>,
  ): Promise<GenerationOutcome> {
    const { spec, ctx } = this;
    const gens = this.sequences.map((_, k) => new SequenceGenerator(spec.inputIds, spec.options, k));
    // One step of lookahead tells whether a token is its sequence's last.
    const pending: SequenceStep[] = gens.map((g) => g.next());
    let due = this.arrivalMs;
    for (let round = 0; ; round++) {
      if (this.cancelled()) {
        this.endLive(pending, 'cancelled');
        return { kind: 'cancelled' };
      }
      if (pending.every((p) => p.done)) {
        this.endLive(pending, 'stop');
        return { kind: 'completed' };
      }
      if (spec.errorAfterTokens !== undefined && this.delivered >= spec.errorAfterTokens) {
        this.endLive(pending, 'cancelled');
        const message = `fake-triton: injected error after ${this.delivered} tokens`;
        return { kind: 'error', error: new TritonError('INTERNAL', message) };
      }
      // Tokens are due on a fixed schedule from arrival, so timer lateness does not add up; a reader
      // that held us back (backpressure) restarts the schedule instead of getting a burst.
      const now = performance.now();
      due = round === 0 ? this.arrivalMs + ctx.ttftMs : Math.max(due + ctx.itlMs, now - ctx.itlMs);
      if (due > now) await sleepUntil(due, [spec.signal, ctx.activity.signal]);
      else if (round % TOKENS_PER_YIELD === TOKENS_PER_YIELD - 1) await yieldToIo();
      if (this.cancelled()) {
        this.endLive(pending, 'cancelled');
        return { kind: 'cancelled' };
      }
      const steps: TokenStep[] = [];
      pending.forEach((p, k) => {
        if (p.done) return;
        const next = gens[k]!.next();
        pending[k] = next;
        const seq = this.sequences[k]!;
        seq.tokens.push(p.token);
        seq.logProbs.push(p.logProb);
        seq.cumLogProb += p.logProb;
        steps.push({
          k,
          token: p.token,
          logProb: p.logProb,
          last: next.done,
          reason: next.done ? next.reason : undefined,
        });
      });
      this.delivered += steps.length;
      const producedNs = nowNs();
      if (this.firstTokenNs === 0n) this.firstTokenNs = producedNs;
      this.lastTokenNs = producedNs;
      const delivery = await deliver(steps);
      if (delivery !== 'ok') {
        this.endLive(pending, 'cancelled');
        return { kind: delivery };
      }
      if (this.stopRequested && !pending.every((p) => p.done)) {
        this.endLive(pending, 'stopped');
        return { kind: 'stopped' };
      }
    }
  }
}
