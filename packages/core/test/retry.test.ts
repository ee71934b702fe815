import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TritonLlmError } from '../src/index.js';
import {
  backoffDelay,
  DEFAULT_RETRY,
  exhausted,
  isConnectionFailure,
  RetryPlan,
  type RetryPolicy,
  retryPolicy,
} from '../src/retry.js';

const refused = (): TritonLlmError => new TritonLlmError('unavailable', 'connect ECONNREFUSED');

const policies = fc.record({
  attempts: fc.integer({ min: 1, max: 20 }),
  initialDelayMs: fc.integer({ min: 0, max: 5000 }),
  maxDelayMs: fc.integer({ min: 0, max: 60_000 }),
  budgetMs: fc.integer({ min: 0, max: 120_000 }),
  retryNonIdempotent: fc.boolean(),
});

function policyFrom(p: RetryPolicy): RetryPolicy {
  return retryPolicy({ ...p, maxDelayMs: Math.max(p.maxDelayMs, p.initialDelayMs) });
}

/** The plan's verdict on a failure with no other endpoint to go to: the wait it chose, or undefined for fail. */
function waitOnSameTarget(plan: RetryPlan, err: unknown, random?: number): number | undefined {
  const decision = plan.decide(err, {}, random);
  return decision.action === 'wait' ? decision.delayMs : undefined;
}

/** A clock the test moves by hand. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 0;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('backoffDelay', () => {
  it('draws from [0, min(maxDelayMs, initialDelayMs * 2^retry)] for any policy and draw', () => {
    fc.assert(
      fc.property(
        policies,
        fc.integer({ min: 0, max: 100 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (p, retry, random) => {
          const policy = policyFrom(p);
          const delay = backoffDelay(policy, retry, random);
          const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** retry);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(ceiling);
          expect(Number.isInteger(delay)).toBe(true);
        },
      ),
    );
  });

  it('grows with the draw, so the jitter spreads clients over the whole window', () => {
    fc.assert(
      fc.property(
        policies,
        fc.integer({ min: 0, max: 30 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (p, retry, a, b) => {
          const policy = policyFrom(p);
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(backoffDelay(policy, retry, lo)).toBeLessThanOrEqual(backoffDelay(policy, retry, hi));
        },
      ),
    );
  });

  it('doubles its ceiling per retry until maxDelayMs', () => {
    const policy = retryPolicy({ initialDelayMs: 100, maxDelayMs: 1000 });
    const ceilings = [0, 1, 2, 3, 4, 5].map((retry) => backoffDelay(policy, retry, 0.999_999_9) + 1);
    expect(ceilings).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});

describe('retryPolicy', () => {
  it('fills unset fields from the defaults and lets later layers win field by field', () => {
    expect(retryPolicy()).toEqual(DEFAULT_RETRY);
    const merged = retryPolicy({ attempts: 5, budgetMs: 50 }, { attempts: 2, initialDelayMs: 7 });
    expect(merged).toEqual({ ...DEFAULT_RETRY, attempts: 2, budgetMs: 50, initialDelayMs: 7 });
  });

  it.each<[object, string]>([
    [{ attempts: 0 }, 'retry.attempts'],
    [{ attempts: 1.5 }, 'retry.attempts'],
    [{ attempts: 1e9 }, 'retry.attempts'],
    [{ initialDelayMs: -1 }, 'retry.initialDelayMs'],
    [{ maxDelayMs: Number.POSITIVE_INFINITY }, 'retry.maxDelayMs'],
    [{ budgetMs: Number.NaN }, 'retry.budgetMs'],
    [{ initialDelayMs: 500, maxDelayMs: 100 }, 'retry.maxDelayMs'],
    [{ retryNonIdempotent: 'yes' }, 'retry.retryNonIdempotent'],
    [{ attemps: 3 }, 'retry.attemps'],
  ])('refuses %j naming %s', (options, field) => {
    const err = (() => {
      try {
        retryPolicy(options);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expect((err as TritonLlmError).message.startsWith(`${field}:`)).toBe(true);
  });
});

describe('isConnectionFailure', () => {
  it('accepts a retryable error that carries no answer of the server', () => {
    expect(isConnectionFailure(refused())).toBe(true);
    expect(isConnectionFailure(new TritonLlmError('resource_exhausted', 'local queue full'))).toBe(true);
  });

  it.each<[string, unknown]>([
    ['an HTTP 503 the server sent', new TritonLlmError('unavailable', 'x', { httpStatus: 503 })],
    ['a gRPC UNAVAILABLE status', new TritonLlmError('unavailable', 'x', { grpcStatus: 14 })],
    ['an in-stream server message', new TritonLlmError('unavailable', 'x', { serverMessage: 'draining' })],
    ['a TLS failure', new TritonLlmError('unavailable', 'x', { retryable: false })],
    ['a protocol error', new TritonLlmError('protocol', 'x')],
    ['a deadline', new TritonLlmError('deadline_exceeded', 'x')],
    ['a cancellation', new TritonLlmError('cancelled', 'x')],
    ['an internal error', new TritonLlmError('internal', 'x')],
    ['a foreign error', new Error('ECONNREFUSED')],
  ])('refuses %s', (_, err) => {
    expect(isConnectionFailure(err)).toBe(false);
  });
});

describe('RetryPlan: waits on the same target', () => {
  it('allows attempts - 1 retries, then gives up', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), (attempts) => {
        const clock = manualClock();
        const schedule = new RetryPlan(
          retryPolicy({ attempts, budgetMs: 1e9, initialDelayMs: 10, maxDelayMs: 10 }),
          { idempotent: true },
          clock.now,
        );
        let retries = 0;
        while (waitOnSameTarget(schedule, refused(), 0.5) !== undefined) retries++;
        expect(retries).toBe(attempts - 1);
        expect(schedule.attempts).toBe(attempts);
      }),
    );
  });

  it('never starts a wait that would end past the budget, whatever the draws and elapsed times', () => {
    fc.assert(
      fc.property(
        policies,
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3000 }), fc.double({ min: 0, max: 1, noNaN: true })), {
          maxLength: 25,
        }),
        (p, steps) => {
          const policy = policyFrom(p);
          const clock = manualClock();
          const schedule = new RetryPlan(policy, { idempotent: true }, clock.now);
          for (const [elapsed, random] of steps) {
            clock.advance(elapsed);
            const delay = waitOnSameTarget(schedule, refused(), random);
            if (delay === undefined) break;
            expect(clock.now() + delay).toBeLessThanOrEqual(policy.budgetMs);
            clock.advance(delay);
          }
          expect(schedule.attempts).toBeLessThanOrEqual(policy.attempts);
        },
      ),
    );
  });

  it('shares the deadline among attempts and never waits past it', () => {
    const clock = manualClock();
    const schedule = new RetryPlan(
      retryPolicy({ attempts: 10, initialDelayMs: 100, maxDelayMs: 100 }),
      { idempotent: true, timeoutMs: 250 },
      clock.now,
    );
    expect(schedule.remainingMs()).toBe(250);
    clock.advance(40);
    const delay = waitOnSameTarget(schedule, refused(), 0.999);
    expect(delay).toBe(99);
    clock.advance(99);
    expect(schedule.remainingMs()).toBe(111);
    clock.advance(50);
    // 61 ms are left: a wait of 99 would outlive the deadline.
    expect(waitOnSameTarget(schedule, refused(), 0.999)).toBeUndefined();
  });

  it('retries non-idempotent calls only when asked', () => {
    const off = new RetryPlan(retryPolicy(), { idempotent: false });
    expect(waitOnSameTarget(off, refused())).toBeUndefined();
    const on = new RetryPlan(retryPolicy({ retryNonIdempotent: true }), { idempotent: false });
    expect(waitOnSameTarget(on, refused())).toBeTypeOf('number');
  });

  it('does not retry an answer of the server', () => {
    const schedule = new RetryPlan(retryPolicy(), { idempotent: true });
    expect(
      waitOnSameTarget(schedule, new TritonLlmError('unavailable', 'draining', { grpcStatus: 14 })),
    ).toBeUndefined();
    expect(schedule.attempts).toBe(1);
  });
});

describe('RetryPlan: the decision for every case', () => {
  const answered = (): TritonLlmError => new TritonLlmError('unavailable', 'draining', { grpcStatus: 14 });
  const plan = (call: { idempotent: boolean; timeoutMs?: number }, options = {}) =>
    new RetryPlan(retryPolicy({ attempts: 5, ...options }), call);

  it.each<[string, { delivered?: boolean; stopSent?: boolean; ended?: boolean }]>([
    ['output was delivered', { delivered: true }],
    ['a stop was sent', { stopSent: true }],
    ['the caller ended the call', { ended: true }],
  ])('never retries once %s, here or elsewhere', (_, situation) => {
    for (const elsewhere of [false, true]) {
      const p = plan({ idempotent: true });
      expect(p.decide(refused(), { ...situation, elsewhere })).toEqual({ action: 'fail' });
      expect(p.attempts).toBe(1);
    }
  });

  it('never retries an error that is not retryable, nor a foreign error', () => {
    for (const err of [
      new TritonLlmError('invalid_argument', 'bad'),
      new TritonLlmError('unavailable', 'TLS', { retryable: false }),
      new Error('ECONNREFUSED'),
    ]) {
      expect(plan({ idempotent: true }).decide(err, { elsewhere: true })).toEqual({ action: 'fail' });
    }
  });

  it('moves a connection failure to another endpoint at once, and waits when there is none', () => {
    const p = plan({ idempotent: true });
    expect(p.decide(refused(), { elsewhere: true })).toEqual({ action: 'move', attempt: 2 });
    const wait = p.decide(refused(), { elsewhere: false }, 0.5);
    expect(wait).toMatchObject({ action: 'wait', attempt: 3 });
    expect(p.attempts).toBe(3);
  });

  it('moves an answer of the server (it did not run the request) but never repeats it on the same server', () => {
    const p = plan({ idempotent: false });
    expect(p.decide(answered(), { elsewhere: false })).toEqual({ action: 'fail' });
    expect(p.decide(answered(), { elsewhere: true })).toEqual({ action: 'move', attempt: 2 });
  });

  it('keeps a non-idempotent call where it failed without an answer, here and elsewhere, unless asked', () => {
    for (const elsewhere of [false, true]) {
      expect(plan({ idempotent: false }).decide(refused(), { elsewhere }).action).toBe('fail');
      expect(
        plan({ idempotent: false }, { retryNonIdempotent: true }).decide(refused(), { elsewhere }).action,
      ).not.toBe('fail');
    }
  });

  it('counts moves and waits in one attempt budget', () => {
    const p = new RetryPlan(retryPolicy({ attempts: 3, initialDelayMs: 0, maxDelayMs: 0 }), {
      idempotent: true,
    });
    expect(p.decide(refused(), { elsewhere: true }).action).toBe('move');
    expect(p.decide(refused(), { elsewhere: false }).action).toBe('wait');
    expect(p.decide(refused(), { elsewhere: true }).action).toBe('fail');
    expect(p.attempts).toBe(3);
  });

  it('does not move past the deadline or the budget', () => {
    const clock = manualClock();
    const p = new RetryPlan(
      retryPolicy({ attempts: 10, budgetMs: 1000 }),
      { idempotent: true, timeoutMs: 500 },
      clock.now,
    );
    clock.advance(500);
    expect(p.decide(refused(), { elsewhere: true }).action).toBe('fail');
    const q = new RetryPlan(retryPolicy({ attempts: 10, budgetMs: 1000 }), { idempotent: true }, clock.now);
    clock.advance(1001);
    expect(q.decide(refused(), { elsewhere: true }).action).toBe('fail');
  });

  it('tells onRetry of every attempt it starts, with the wait and the error', () => {
    const seen: [number, number, string, boolean][] = [];
    const p = new RetryPlan(retryPolicy({ attempts: 3, initialDelayMs: 100, maxDelayMs: 100 }), {
      idempotent: true,
      onRetry: (attempt, delayMs, error, moved) => seen.push([attempt, delayMs, error.code, moved]),
    });
    p.decide(refused(), { elsewhere: true });
    p.decide(refused(), {}, 0.5);
    p.decide(refused(), {});
    expect(seen).toEqual([
      [2, 0, 'unavailable', true],
      [3, 50, 'unavailable', false],
    ]);
  });
});

describe('exhausted', () => {
  it('says how many attempts were made and keeps code, fields and cause', () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:1');
    const err = new TritonLlmError('unavailable', 'ServerLive: connection failed', {
      cause,
      model: 'ensemble',
      requestId: '7',
    });
    const out = exhausted(err, 3);
    expect(out.message).toBe('ServerLive: connection failed (after 3 attempts)');
    expect([out.code, out.model, out.requestId, out.retryable, out.cause]).toEqual([
      'unavailable',
      'ensemble',
      '7',
      true,
      cause,
    ]);
    expect(exhausted(err, 1)).toBe(err);
  });
});

describe('a refused connection with retries turned off', () => {
  const nothingListens = (): TritonLlmError =>
    new TritonLlmError('unavailable', 'connection failed', {
      retryable: true,
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    });
  const call = { idempotent: true };

  it('fails at once under attempts: 1, which asks for no retry', () => {
    const clock = manualClock();
    const plan = new RetryPlan(retryPolicy({ attempts: 1 }), call, clock.now);
    expect(plan.decide(nothingListens(), {}, 0.5)).toEqual({ action: 'fail' });
  });

  it('waits past attempts when retries are on, so a restart within the budget is outlasted', () => {
    const clock = manualClock();
    const plan = new RetryPlan(retryPolicy({ attempts: 2, budgetMs: 10_000 }), call, clock.now);
    let waits = 0;
    for (let delay = waitOnSameTarget(plan, nothingListens(), 0.5); delay !== undefined; ) {
      waits++;
      clock.advance(delay + 1);
      delay = waitOnSameTarget(plan, nothingListens(), 0.5);
    }
    expect(waits).toBeGreaterThan(2);
  });
});
