import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Keepalive } from '../src/h2/keepalive.js';

describe('Keepalive', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function watch(everyMs: number, timeoutMs: number) {
    const pings: number[] = [];
    const lost: number[] = [];
    const keepalive = new Keepalive(
      everyMs,
      timeoutMs,
      () => pings.push(Date.now()),
      (t) => lost.push(t),
    );
    return { keepalive, pings, lost };
  }

  it('sends no PING while the peer keeps sending, and one after a whole interval of silence', () => {
    const { keepalive, pings } = watch(1_000, 500);
    keepalive.start();
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(400);
      keepalive.received(Date.now());
    }
    expect(pings).toEqual([]);
    vi.advanceTimersByTime(999);
    expect(pings).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(pings).toHaveLength(1);
    keepalive.stop();
  });

  it('never pings more often than the interval, answered or not', () => {
    const { keepalive, pings } = watch(1_000, 10_000);
    keepalive.start();
    for (let i = 0; i < 5; i++) {
      vi.advanceTimersByTime(1_000);
      keepalive.received(Date.now());
      keepalive.answered();
    }
    const gaps = pings.slice(1).map((t, i) => t - pings[i]!);
    expect(gaps.every((g) => g >= 1_000)).toBe(true);
    keepalive.stop();
  });

  it('gives the connection up when a PING goes unanswered, and not when it is answered', () => {
    const answered = watch(1_000, 500);
    answered.keepalive.start();
    vi.advanceTimersByTime(1_000);
    answered.keepalive.received(Date.now());
    answered.keepalive.answered();
    vi.advanceTimersByTime(600);
    expect(answered.lost).toEqual([]);
    answered.keepalive.stop();

    const silent = watch(1_000, 500);
    silent.keepalive.start();
    vi.advanceTimersByTime(1_500);
    expect(silent.lost).toEqual([500]);
    silent.keepalive.stop();
  });

  it('does nothing when turned off', () => {
    const { keepalive, pings } = watch(0, 500);
    keepalive.start();
    vi.advanceTimersByTime(1_000_000);
    expect(pings).toEqual([]);
  });
});
