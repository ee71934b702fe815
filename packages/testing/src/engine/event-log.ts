/** The event log of GENERATOR.md, with waiting for an event that has not happened yet. */
import type { FakeEvent } from '../types.js';

interface Waiter {
  readonly match: (e: FakeEvent) => boolean;
  readonly resolve: (e: FakeEvent) => void;
}

export class EventLog {
  private log: FakeEvent[] = [];
  private waiters = new Set<Waiter>();

  record(event: Omit<FakeEvent, 'ts'>): void {
    const full: FakeEvent = { ts: Date.now(), ...event };
    this.log.push(full);
    for (const w of this.waiters) {
      if (w.match(full)) {
        this.waiters.delete(w);
        w.resolve(full);
      }
    }
  }

  all(): FakeEvent[] {
    return [...this.log];
  }

  clear(): void {
    this.log = [];
  }

  wait(match: (e: FakeEvent) => boolean, timeoutMs: number): Promise<FakeEvent> {
    const past = this.log.find(match);
    if (past) return Promise.resolve(past);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        const seen = this.log.map((e) => `${e.model}/${e.id}:${e.event}(${e.tokens})`).join(', ');
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
