/** What every model execution of one fake server shares. */
import { setMaxListeners } from 'node:events';
import type { ModelDef } from '../models/repository.js';
import type { EventLog } from './event-log.js';
import type { FaultState } from './faults.js';
import type { ModelControl } from './model-control.js';
import type { BatchClock } from './pace.js';
import type { Statistics } from './statistics.js';

/** In-band `stop` requests find running generations by model and request id, across connections. */
export class StopRegistry {
  private running = new Map<string, Set<() => void>>();

  register(model: string, id: string, stop: () => void): () => void {
    const key = `${model}\u0000${id}`;
    let set = this.running.get(key);
    if (!set) {
      set = new Set();
      this.running.set(key, set);
    }
    set.add(stop);
    return () => {
      set.delete(stop);
      if (set.size === 0) this.running.delete(key);
    };
  }

  /** Stops every running request of `model` with `id`; false when there was none. */
  stop(model: string, id: string): boolean {
    const set = this.running.get(`${model}\u0000${id}`);
    if (!set) return false;
    for (const stop of set) stop();
    return true;
  }
}

/** Counts running work (so tests can wait for it) and lets close() end all of it. */
export class Activity {
  private readonly running = new Set<Promise<unknown>>();
  private readonly shutdown = new AbortController();

  constructor() {
    // Every paced generation listens on this one signal: thousands at once are expected, not a leak.
    setMaxListeners(0, this.shutdown.signal);
  }

  get active(): number {
    return this.running.size;
  }

  /** Aborted by close(): every sleep and wait of every execution ends. */
  get signal(): AbortSignal {
    return this.shutdown.signal;
  }

  /** Counts `work` as one running request until it settles. */
  track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
  }

  /** Aborts everything; resolves when it has ended (or after `graceMs`, should something hang). */
  async close(graceMs: number): Promise<void> {
    this.shutdown.abort();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.all(this.running), grace]);
    clearTimeout(timer);
  }
}

export interface EngineContext {
  /** The models served now (all of them unless model control is explicit). */
  readonly models: ReadonlyMap<string, ModelDef>;
  readonly control: ModelControl;
  readonly events: EventLog;
  readonly faults: FaultState;
  readonly stops: StopRegistry;
  readonly activity: Activity;
  readonly statistics: Statistics;
  readonly ttftMs: number;
  readonly itlMs: number;
  /** Back-to-back tokens (itl 0) a generation sends before yielding to I/O and the others. */
  readonly tokensPerTurn: number;
  /** In-flight batching's clock, when FakeTritonOptions.batchStepMs set one. */
  readonly batchClock?: BatchClock | undefined;
}

/** See FakeTritonOptions.tokensPerTurn. */
export const DEFAULT_TOKENS_PER_TURN = 64;
