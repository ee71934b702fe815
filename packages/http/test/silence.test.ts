import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SilenceWatch } from '../src/call/silence.js';

// The liveness rule's clock (issue 55), on vitest's fake timers: when a silent answer is given up,
// and that a live one never is. test/reliability/silent-stream.test.ts runs it on real servers.
describe('SilenceWatch', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function watch(limitMs: number) {
    const silent: number[] = [];
    return { w: new SilenceWatch(limitMs, (ms) => silent.push(ms)), silent };
  }

  it('gives up an answer silent for the bound, not before, and no later than a quarter past it', () => {
    const { w, silent } = watch(1000);
    w.start();
    vi.advanceTimersByTime(999);
    expect(silent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(silent).toEqual([1000]);
  });

  it('counts the silence from the last byte', () => {
    const { w, silent } = watch(1000);
    w.start();
    vi.advanceTimersByTime(600);
    w.received();
    vi.advanceTimersByTime(999);
    expect(silent).toEqual([]);
    vi.advanceTimersByTime(1250 - 999);
    expect(silent).toEqual([1000]);
  });

  it('never gives up an answer whose bytes keep coming within the bound', () => {
    const { w, silent } = watch(1000);
    w.start();
    for (let i = 0; i < 100; i++) {
      vi.advanceTimersByTime(900);
      w.received();
    }
    expect(silent).toEqual([]);
    w.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not count the time it is stopped (a paused reader), and starts afresh', () => {
    const { w, silent } = watch(1000);
    w.start();
    vi.advanceTimersByTime(900);
    w.stop();
    vi.advanceTimersByTime(10_000);
    w.start();
    vi.advanceTimersByTime(999);
    expect(silent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(silent).toEqual([1000]);
  });

  it('is off at 0', () => {
    const { w } = watch(0);
    w.start();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('waits out a bound longer than setTimeout can (2^31 - 1 ms) instead of firing at once', () => {
    const limit = 4 * 2 ** 31;
    const { w, silent } = watch(limit);
    w.start();
    vi.advanceTimersByTime(limit - 1);
    expect(silent).toEqual([]);
    vi.advanceTimersByTime(limit / 4 + 1);
    expect(silent).toEqual([limit]);
  });
});
