import { describe, expect, it } from 'vitest';
import { now } from '../src/clock.js';

/** Spins until `ms` of real time have passed, without yielding to the event loop. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: the point is that no microtask may run meanwhile
  }
}

describe('the per-response clock', () => {
  it('answers one reading to every call in one synchronous run, never later than the true time', () => {
    const first = now();
    spin(5);
    const second = now();
    expect(second).toBe(first);
    expect(second).toBeLessThan(performance.now());
  });

  it('reads the clock again after a microtask checkpoint', async () => {
    const before = now();
    spin(5);
    await Promise.resolve();
    // The expiry queued by the first read ran before this continuation.
    const after = now();
    expect(after - before).toBeGreaterThanOrEqual(5);
    expect(after).toBeLessThanOrEqual(performance.now());
  });
});
