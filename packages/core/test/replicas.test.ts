import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { TritonLlmError } from '../src/errors.js';
import { STALL_MS } from '../src/replicas/endpoint.js';
import { type ReplicaTransportOptions, replicaTransport } from '../src/replicas/replica-transport.js';
import type { InferResponse, Transport } from '../src/transport.js';
import { drain, MemoryReplica, rejection, request, servedBy, trio, unavailable } from './replica-doubles.js';

type Options = Omit<ReplicaTransportOptions, 'endpoints'>;

function over(replicas: readonly MemoryReplica[], options: Options = {}) {
  return replicaTransport({
    endpoints: replicas.map((r) => ({ name: r.name, transport: r })),
    healthIntervalMs: 0,
    ...options,
  });
}

function stateOf(t: ReturnType<typeof over>, name: string) {
  const s = t.endpointStats().find((e) => e.name === name);
  if (s === undefined) throw new Error(`no endpoint ${name}`);
  return s;
}

function thrown(fn: () => unknown): TritonLlmError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  }
  throw new Error('expected a TritonLlmError, nothing was thrown');
}

describe('least outstanding requests', () => {
  it('takes turns while every endpoint is idle', async () => {
    const replicas = trio();
    const t = over(replicas);
    const served: string[] = [];
    for (let i = 0; i < 6; i++) served.push(servedBy(await t.infer(request(`r${i}`))));
    expect(served.filter((s) => s === 'a')).toHaveLength(2);
    expect(served.filter((s) => s === 'b')).toHaveLength(2);
    expect(served.filter((s) => s === 'c')).toHaveLength(2);
    expect(t.endpointStats().map((s) => s.requests)).toEqual([2, 2, 2]);
  });

  it('sends a request to the endpoint with the fewest in flight', async () => {
    const [a, b, c] = trio();
    const t = over([a, b, c]);
    a.hold = true;
    b.hold = true;
    c.hold = true;
    const first = [t.infer(request('1')), t.infer(request('2')), t.infer(request('3'))];
    // One each is in flight; finishing b's makes b the least loaded.
    b.release();
    await first[1];
    b.hold = false;
    expect(servedBy(await t.infer(request('4')))).toBe('b');
    expect(t.endpointStats().map((s) => s.inFlight)).toEqual([1, 0, 1]);
    a.release();
    c.release();
    await Promise.all(first);
    expect(t.endpointStats().map((s) => s.inFlight)).toEqual([0, 0, 0]);
  });

  it('always picks an endpoint holding the fewest requests, whatever order they start and end in', async () => {
    // An op is either a new request or the end of every request held by replica i.
    const op = fc.oneof(fc.constant('start' as const), fc.integer({ min: 0, max: 2 }));
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const replicas = trio();
        for (const r of replicas) r.hold = true;
        const t = over(replicas);
        const running = new Map<MemoryReplica, Promise<InferResponse>[]>(replicas.map((r) => [r, []]));
        for (const o of ops) {
          if (o === 'start') {
            const before = t.endpointStats().map((s) => s.inFlight);
            const done = t.infer(request());
            const after = t.endpointStats().map((s) => s.inFlight);
            const chosen = after.findIndex((n, i) => n === (before[i] ?? 0) + 1);
            expect(before[chosen]).toBe(Math.min(...before));
            running.get(replicas[chosen]!)!.push(done);
          } else {
            const replica = replicas[o]!;
            replica.release();
            await Promise.all(running.get(replica)!.splice(0));
          }
        }
        for (const r of replicas) r.release();
        await Promise.all([...running.values()].flat());
        expect(t.endpointStats().every((s) => s.inFlight === 0)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});

describe('ejection', () => {
  it('ejects an endpoint after ejectAfterFailures retryable failures and stops sending to it', async () => {
    const [a, b, c] = trio();
    const t = over([a, b, c], { ejectAfterFailures: 2, failoverAttempts: 0 });
    a.down = true;
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => t.infer(request(`${i}`))));
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(2);
    expect(stateOf(t, 'a')).toMatchObject({ state: 'ejected', errors: 2, ejections: 1 });
    const before = a.calls.length;
    for (let i = 0; i < 4; i++) await t.infer(request(`later${i}`));
    expect(a.calls.length).toBe(before);
  });

  it('never ejects for errors every replica would give (bad input, model errors)', async () => {
    const [a, b] = trio();
    const t = over([a, b], { ejectAfterFailures: 1 });
    a.failNext.push(
      new TritonLlmError('invalid_argument', 'bad input'),
      new TritonLlmError('internal', 'boom'),
    );
    b.failNext.push(
      new TritonLlmError('invalid_argument', 'bad input'),
      new TritonLlmError('internal', 'boom'),
    );
    for (let i = 0; i < 4; i++) await rejection(t.infer(request()));
    expect(t.endpointStats().map((s) => [s.state, s.errors])).toEqual([
      ['healthy', 2],
      ['healthy', 2],
    ]);
  });

  it('still tries the ejected endpoints when none is healthy, and readmits the one that answers', async () => {
    const [a, b] = trio();
    const t = over([a, b], { ejectAfterFailures: 1, failoverAttempts: 1 });
    a.down = true;
    b.down = true;
    await rejection(t.infer(request()));
    expect(t.endpointStats().map((s) => s.state)).toEqual(['ejected', 'ejected']);
    b.down = false;
    expect(servedBy(await t.infer(request()))).toBe('b');
    expect(stateOf(t, 'b').state).toBe('healthy');
    expect(stateOf(t, 'a').state).toBe('ejected');
  });
});

describe('health checks', () => {
  it('ejects a server that is not ready and brings it back when it is', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    a.ready = false;
    await t.checkHealth();
    expect(stateOf(t, 'a').state).toBe('ejected');
    expect(stateOf(t, 'a').lastError?.message).toMatch(/not ready/);
    for (let i = 0; i < 3; i++) expect(servedBy(await t.infer(request()))).toBe('b');
    a.ready = true;
    await t.checkHealth();
    expect(stateOf(t, 'a').state).toBe('healthy');
  });

  it('asks about the model when one is given', async () => {
    const [a, b] = trio();
    const t = over([a, b], { model: 'ensemble' });
    b.modelIsReady = false;
    await t.checkHealth();
    expect(b.probes).toContain('model ensemble');
    expect(t.endpointStats().map((s) => s.state)).toEqual(['healthy', 'ejected']);
  });

  it('ejects an endpoint whose check fails to connect', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    b.down = true;
    await t.checkHealth();
    expect(stateOf(t, 'b')).toMatchObject({ state: 'ejected' });
    expect(stateOf(t, 'b').lastError?.code).toBe('unavailable');
  });

  it('runs in the background every healthIntervalMs', async () => {
    const [a, b] = trio();
    const t = over([a, b], { healthIntervalMs: 10 });
    try {
      a.ready = false;
      await vi.waitFor(() => expect(stateOf(t, 'a').state).toBe('ejected'), { timeout: 5000 });
      a.ready = true;
      await vi.waitFor(() => expect(stateOf(t, 'a').state).toBe('healthy'), { timeout: 5000 });
    } finally {
      await t.close();
    }
    const probes = a.probes.length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(a.probes.length).toBe(probes);
  });
});

describe('failover of infer', () => {
  it('moves a request that failed with a retryable error to another endpoint', async () => {
    const [a, b, c] = trio();
    const t = over([a, b, c]);
    a.failNext.push(unavailable());
    const r = await t.infer(request('x'));
    expect(servedBy(r)).not.toBe('a');
    expect(a.calls).toEqual(['infer x']);
    expect(stateOf(t, 'a')).toMatchObject({ requests: 1, errors: 1, consecutiveFailures: 1 });
  });

  it('gives up after failoverAttempts more endpoints and throws the last error', async () => {
    const replicas = trio();
    for (const r of replicas) r.failNext.push(new TritonLlmError('unavailable', `down ${r.name}`));
    const t = over(replicas, { failoverAttempts: 1 });
    const err = await rejection(t.infer(request()));
    expect(err.code).toBe('unavailable');
    expect(replicas.filter((r) => r.calls.length > 0)).toHaveLength(2);
    const tried = replicas.filter((r) => r.calls.length > 0).map((r) => r.name);
    expect(tried).toContain(err.message.replace('down ', ''));
  });

  it('does not move a request that failed for a reason another replica shares', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    a.failNext.push(new TritonLlmError('invalid_argument', 'bad'));
    const err = await rejection(t.infer(request()));
    expect(err.code).toBe('invalid_argument');
    expect(b.calls).toEqual([]);
  });

  it('does not move a request the caller aborted', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    const controller = new AbortController();
    a.hold = true;
    const call = t.infer(request(), { signal: controller.signal });
    controller.abort();
    a.failNext.push(unavailable());
    a.release();
    await rejection(call);
    expect(b.calls).toEqual([]);
  });

  it('gives a moved request only what remains of its timeout', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    a.failNext.push(unavailable());
    await t.infer(request(), { timeoutMs: 60_000 });
    expect(a.lastOptions?.timeoutMs).toBe(60_000);
    expect(b.lastOptions?.timeoutMs).toBeGreaterThan(0);
    expect(b.lastOptions?.timeoutMs).toBeLessThanOrEqual(60_000);
  });
});

describe('failover of streams', () => {
  it('moves a stream that failed before its first response', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    a.failNext.push(unavailable());
    const responses = await drain(t.stream(request('s')));
    expect(responses.map(servedBy)).toEqual(['b', 'b', 'b']);
    expect(responses.at(-1)?.final).toBe(true);
    expect(stateOf(t, 'a')).toMatchObject({ requests: 1, errors: 1, inFlight: 0 });
    expect(stateOf(t, 'b')).toMatchObject({ requests: 1, errors: 0, inFlight: 0 });
  });

  it('never moves a stream after its first response: the error passes through unchanged', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    const failure = unavailable();
    a.failAfterFirst = failure;
    const got: InferResponse[] = [];
    let caught: unknown;
    try {
      for await (const r of t.stream(request('s'))) got.push(r);
    } catch (err) {
      caught = err;
    }
    expect(got.map(servedBy)).toEqual(['a']);
    expect(caught).toBe(failure);
    expect(b.calls).toEqual([]);
  });

  it('sends the stop to the endpoint that carries the stream', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    a.failNext.push(unavailable());
    const stream = t.stream(request('s'));
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done === false && servedBy(first.value)).toBe('b');
    await stream.sendStop(request('s'));
    expect(b.stops).toEqual(['s']);
    expect(a.stops).toEqual([]);
    await iterator.return?.();
    expect(t.endpointStats().map((s) => s.inFlight)).toEqual([0, 0]);
  });

  it('does not move a stream once a stop was sent', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    a.failNext.push(unavailable());
    const stream = t.stream(request('s'));
    await stream.sendStop(request('s'));
    await expect(drain(stream)).rejects.toMatchObject({ code: 'unavailable' });
    expect(a.stops).toEqual(['s']);
    expect(b.calls).toEqual([]);
  });

  it('counts a stream in flight until it ends, and an early break releases it', async () => {
    const [a] = trio();
    const t = over([a]);
    a.streamLength = 5;
    for await (const _ of t.stream(request('s'))) {
      expect(stateOf(t, 'a').inFlight).toBe(1);
      break;
    }
    expect(stateOf(t, 'a').inFlight).toBe(0);
    expect(stateOf(t, 'a').latencyMs).toBeGreaterThanOrEqual(0);
  });
  it('counts a stream in flight from its final response to its end, which it reads without a pull', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    a.holdEnd = true;
    a.streamLength = 0;
    const iterator = t.stream(request('s'))[Symbol.asyncIterator]();
    const final = await iterator.next();
    expect(final).toMatchObject({ done: false, value: { final: true } });
    // The end has not come: the request still counts on `a`, so the next one goes to `b`.
    expect(stateOf(t, 'a').inFlight).toBe(1);
    expect(servedBy((await drain(t.stream(request('n'))))[0]!)).toBe('b');
    // Nobody pulls again; the end arrives all the same and releases the request.
    a.release();
    await vi.waitFor(() => expect(stateOf(t, 'a').inFlight).toBe(0));
    expect(stateOf(t, 'a')).toMatchObject({ requests: 1, errors: 0 });
    // The end read ahead is the consumer's next answer.
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it('keeps a response the read of the end brought for the next pull', async () => {
    const [a] = trio();
    const t = over([a]);
    a.streamLength = 0;
    a.extraAfterFinal = 1;
    const iterator = t.stream(request('s'))[Symbol.asyncIterator]();
    expect(await iterator.next()).toMatchObject({ done: false, value: { final: true } });
    await vi.waitFor(() => expect(a.extraSent).toBe(1));
    expect(await iterator.next()).toMatchObject({ done: false, value: { id: 's', final: false } });
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    expect(stateOf(t, 'a').inFlight).toBe(0);
  });

  it('stops counting a stream in flight when its caller aborts, even if nobody pulls again', async () => {
    const [a] = trio();
    const t = over([a]);
    const controller = new AbortController();
    const iterator = t.stream(request('s'), { signal: controller.signal })[Symbol.asyncIterator]();
    await iterator.next();
    expect(stateOf(t, 'a').inFlight).toBe(1);
    controller.abort();
    expect(stateOf(t, 'a').inFlight).toBe(0);
    expect(stateOf(t, 'a').errors).toBe(0);
  });
});

describe('an endpoint gone silent (issue 55)', () => {
  const pastStall = () => new Promise((resolve) => setTimeout(resolve, STALL_MS + 100));

  // `a` holds its requests, so each new one stays in flight there: least outstanding would then
  // send every other one to `b` unless `b` is suspected.
  async function picksWhileAHolds(t: ReturnType<typeof over>, a: MemoryReplica, n: number) {
    a.hold = true;
    const calls = Array.from({ length: n }, (_, i) => t.infer(request(`late${i}`)));
    // Every call has picked and reached its replica (a held one waits there) by the next turn.
    await new Promise((resolve) => setTimeout(resolve, 10));
    a.release();
    return (await Promise.all(calls)).map(servedBy);
  }

  // Two streams on replicas `a` and `b` (one each: the second goes to the idle one), each past its first response.
  async function twoStreamsStarted() {
    const [a, b] = trio();
    a.streamLength = 10;
    b.streamLength = 10;
    const t = over([a, b]);
    const streams = [t.stream(request('s0')), t.stream(request('s1'))];
    const readers = streams.map((s) => s[Symbol.asyncIterator]());
    const firsts = await Promise.all(readers.map((r) => r.next()));
    return { a, b, t, streams, readers, firsts };
  }

  it('suspects an endpoint that answered one request and froze with another still waiting', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    a.hold = true;
    b.hold = true;
    const first = ['r0', 'r1', 'r2', 'r3'].map((id) => t.infer(request(id)));
    expect([a.waiting, b.waiting]).toEqual([2, 2]);
    // b answers its older request; the younger one still waits when it freezes.
    const answered = b.calls[0]!.split(' ')[1]!;
    b.releaseOne();
    await first[Number(answered.slice(1))];
    b.freeze();
    a.release();
    await pastStall();

    expect(await picksWhileAHolds(t, a, 4)).toEqual(['a', 'a', 'a', 'a']);
    expect(b.calls).toHaveLength(2);
    // The suspect is probed (the probe waits, as the frozen server does) and stays in the pool.
    expect(b.probes.length).toBeGreaterThan(0);
    expect(stateOf(t, 'b')).toMatchObject({ state: 'healthy', inFlight: 1 });
    b.thaw();
    b.release();
    await Promise.all(first);
  });

  it('suspects an endpoint whose stream it ended after a silence longer than STALL_MS', async () => {
    const { a, b, t, streams, readers, firsts } = await twoStreamsStarted();
    const onB = firsts.findIndex((r) => r.done === false && servedBy(r.value) === 'b');
    expect(onB).toBeGreaterThanOrEqual(0);
    // The stream on `a` ends now: ended after the pause, it too would have been silent that long.
    await readers[1 - onB]!.return!();
    b.freeze();
    const stuck = readers[onB]!.next();
    await pastStall();
    // What a generation's idle timeout does: cancel the stream it heard nothing from.
    streams[onB]!.cancel();
    expect(stateOf(t, 'b').inFlight).toBe(0);

    expect(await picksWhileAHolds(t, a, 4)).toEqual(['a', 'a', 'a', 'a']);
    expect(b.calls).toEqual([`stream s${onB}`, `cancel s${onB}`]);
    expect(b.probes.length).toBeGreaterThan(0);
    b.thaw();
    await stuck.catch(() => undefined);
  });

  it('suspects an endpoint whose running streams went silent, though none of them awaits a first response', async () => {
    const { a, b, t, readers, firsts } = await twoStreamsStarted();
    const onB = firsts.findIndex((r) => r.done === false && servedBy(r.value) === 'b');
    await readers[1 - onB]!.return!();
    // Frozen mid-generation: its stream stays open and in flight, nothing more arrives.
    b.freeze();
    const stuck = readers[onB]!.next();
    await pastStall();
    expect(stateOf(t, 'b').inFlight).toBe(1);

    expect(await picksWhileAHolds(t, a, 4)).toEqual(['a', 'a', 'a', 'a']);
    expect(b.calls).toEqual([`stream s${onB}`]);
    expect(b.probes.length).toBeGreaterThan(0);
    b.thaw();
    await stuck;
  });

  it('with every endpoint suspect, sends each request to the one heard from last', async () => {
    const { a, b, t, readers, firsts } = await twoStreamsStarted();
    const onB = firsts.findIndex((r) => r.done === false && servedBy(r.value) === 'b');
    b.freeze();
    const stuck = readers[onB]!.next();
    await new Promise((resolve) => setTimeout(resolve, STALL_MS / 2));
    // `a` is heard from once more, then its consumer stops reading: past STALL_MS, it looks as
    // silent as `b` (both are probed), but `b` has been silent longer.
    await readers[1 - onB]!.next();
    await pastStall();

    expect(await picksWhileAHolds(t, a, 4)).toEqual(['a', 'a', 'a', 'a']);
    expect(a.probes.length).toBeGreaterThan(0);
    expect(b.probes.length).toBeGreaterThan(0);
    expect(b.calls).toEqual([`stream s${onB}`]);
    b.thaw();
    await stuck;
    await readers[1 - onB]!.return!();
  });

  it('does not suspect an endpoint whose stream the caller ended soon after a response', async () => {
    const { a, b, t, streams } = await twoStreamsStarted();
    for (const s of streams) s.cancel();
    await pastStall();

    const served = await picksWhileAHolds(t, a, 4);
    expect(served.filter((s) => s === 'b')).toHaveLength(2);
    expect(b.probes).toEqual([]);
  });
});

describe('discovery', () => {
  it('follows the listed addresses: new ones join, dropped ones drain and close', async () => {
    let listed = ['a', 'b'];
    const made = new Map<string, MemoryReplica>();
    const t = replicaTransport({
      endpoints: {
        protocol: 'grpc',
        discover: async () => listed,
        connect: (address) => {
          const r = new MemoryReplica(address);
          made.set(address, r);
          return r;
        },
      },
      healthIntervalMs: 0,
      refreshIntervalMs: 10,
    });
    try {
      await t.infer(request());
      expect(t.endpointStats().map((s) => s.name)).toEqual(['a', 'b']);
      const [a, b] = [made.get('a')!, made.get('b')!];
      a.hold = true;
      b.hold = true;
      // Least outstanding: one on each, and b's ends at once.
      const running = [t.infer(request('1')), t.infer(request('2'))];
      b.hold = false;
      b.release();
      listed = ['b', 'c'];
      await vi.waitFor(() => expect(t.endpointStats().map((s) => s.name)).toContain('c'), { timeout: 5000 });
      expect(stateOf(t, 'a').state).toBe('draining');
      expect(a.closed).toBe(false);
      a.release();
      await Promise.all(running);
      expect(a.closed).toBe(true);
      for (let i = 0; i < 4; i++) expect(servedBy(await t.infer(request()))).not.toBe('a');
    } finally {
      await t.close();
    }
    expect([...made.values()].every((r) => r.closed)).toBe(true);
  });

  it('fails requests with unavailable, the discovery error as cause, while nothing was discovered', async () => {
    const t = replicaTransport({
      endpoints: {
        protocol: 'http',
        discover: async () => {
          throw new Error('getaddrinfo ENOTFOUND triton');
        },
        connect: (address) => new MemoryReplica(address),
      },
      healthIntervalMs: 0,
      refreshIntervalMs: 0,
    });
    const err = await rejection(t.infer(request()));
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/ENOTFOUND/);
    await t.close();
  });
});

describe('options and lifecycle', () => {
  it('refuses bad options, naming the field', () => {
    const a = new MemoryReplica('a');
    expect(thrown(() => replicaTransport({ endpoints: [] })).message).toMatch(/^endpoints:/);
    const http = Object.assign(new MemoryReplica('h'), { protocol: 'http' }) as unknown as Transport;
    expect(thrown(() => replicaTransport({ endpoints: [a, http] })).message).toMatch(/^endpoints\[1\]/);
    expect(
      thrown(() =>
        replicaTransport({
          endpoints: [
            { name: 'x', transport: a },
            { name: 'x', transport: new MemoryReplica('b') },
          ],
        }),
      ).message,
    ).toMatch(/^endpoints\[1\]\.name/);
    for (const [field, value] of [
      ['healthIntervalMs', -1],
      ['healthTimeoutMs', 0],
      ['ejectAfterFailures', 0],
      ['failoverAttempts', 1.5],
      ['refreshIntervalMs', Number.NaN],
    ] as const) {
      const err = thrown(() => replicaTransport({ endpoints: [a], [field]: value }));
      expect(err.code).toBe('invalid_argument');
      expect(err.message.startsWith(`${field}:`)).toBe(true);
    }
  });

  it('names unnamed transports by position and reports the protocol of its endpoints', () => {
    const t = replicaTransport({ endpoints: trio(), healthIntervalMs: 0 });
    expect(t.protocol).toBe('grpc');
    expect(t.endpointStats().map((s) => s.name)).toEqual(['endpoint-0', 'endpoint-1', 'endpoint-2']);
  });

  it('sends metadata calls to a healthy endpoint, moving on from one that is down', async () => {
    const [a, b] = trio();
    const t = over([a, b]);
    a.down = true;
    expect((await t.serverMetadata()).name).toBe('b');
    expect((await t.modelConfig('m')).name).toBe('m');
    // Metadata calls are not inference requests.
    expect(t.endpointStats().map((s) => s.requests)).toEqual([0, 0]);
  });

  it('closes every endpoint, and refuses calls afterwards', async () => {
    const replicas = trio();
    const t = over(replicas);
    await t.close();
    expect(replicas.every((r) => r.closed)).toBe(true);
    const err = await rejection(t.infer(request()));
    expect(err.code).toBe('unavailable');
    expect(err.retryable).toBe(false);
  });
});
