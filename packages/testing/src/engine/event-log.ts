/** The event log of GENERATOR.md, with waiting for an event that has not happened yet. */
import type { FakeEvent } from '../types.js';

interface Waiter {
  readonly match: (e: FakeEvent) => boolean;
  readonly resolve: (e: FakeEvent) => void;
}

/** Events kept by default: a test sees its own requests' events; a long-lived fake stays bounded. */
export const DEFAULT_MAX_EVENTS = 10_000;

export class EventLog {
  private log: FakeEvent[] = [];
  private waiters = new Set<Waiter>();

  /**
   * @param maxEvents the newest events kept (older ones are forgotten); `Infinity` keeps all. Every
   *   request records two to four events of some 150 bytes, so an unbounded log grew a benchmark's
   *   fake by hundreds of megabytes over a run, and its collections by as much.
   */
  constructor(private readonly maxEvents: number = DEFAULT_MAX_EVENTS) {}

  record(event: Omit<FakeEvent, 'ts'>): void {
    const full: FakeEvent = { ts: Date.now(), ...event };
    if (this.maxEvents > 0) {
      this.log.push(full);
      // Trimmed in halves, so forgetting costs O(1) per event rather than a shift each time.
      if (this.log.length >= 2 * this.maxEvents) this.log.splice(0, this.log.length - this.maxEvents);
    }
    for (const w of this.waiters) {
      if (w.match(full)) {
        this.waiters.delete(w);
        w.resolve(full);
      }
    }
  }

  all(): FakeEvent[] {
    return this.log.slice(this.firstKept());
  }

  /** Where the kept window starts: between trims the array holds up to twice `maxEvents`. */
  private firstKept(): number {
    return Math.max(0, this.log.length - this.maxEvents);
  }

  clear(): void {
    this.log = [];
  }

  wait(match: (e: FakeEvent) => boolean, timeoutMs: number): Promise<FakeEvent> {
    // Searched in place: a copy of a full log per call would cost a test tens of microseconds.
    for (let i = this.firstKept(); i < this.log.length; i++) {
      const past = this.log[i]!;
      if (match(past)) return Promise.resolve(past);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        const seen = this.all()
          .map((e) => `${e.model}/${e.id}:${e.event}(${e.tokens})`)
          .join(', ');
        reject(new Error(`no matching fake Triton event within ${timeoutMs} ms; events: [${seen}]`));
      }, timeoutMs);
      const waiter: Waiter = {
        match,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
      this.waiters.add(waiter);
    });
  }
}
