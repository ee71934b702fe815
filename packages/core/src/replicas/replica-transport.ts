import { asyncDispose } from '../async-dispose.js';
import { invalidArgument, TritonLlmError } from '../errors.js';
import type { Transport } from '../transport.js';
import type { EndpointStats } from './endpoint.js';
import { type EndpointSource, type PoolPolicy, ReplicaPool } from './pool.js';
import { ReplicaStream } from './stream.js';

/**
 * How a replica transport watches and uses its endpoints. The transports' own `baseUrls` and `dns`
 * options take the same fields.
 */
export interface ReplicaOptions {
  /**
   * Background health checks every this many milliseconds: `serverReady`, then `modelReady` of
   * `model` when given. A check that fails ejects the endpoint; one that passes brings it back.
   * `0` turns them off (an ejected endpoint then returns when a request succeeds on it). Default 5000.
   */
  readonly healthIntervalMs?: number;
  /** Deadline of each health check, in milliseconds. Default 2000 (or `healthIntervalMs`, if smaller). */
  readonly healthTimeoutMs?: number;
  /** The model the health checks ask about, e.g. `'ensemble'`; absent: only the server's readiness. */
  readonly model?: string;
  readonly modelVersion?: string;
  /**
   * Consecutive retryable failures of requests (unavailable, overloaded) after which an endpoint is
   * ejected. Bad requests and model errors never count: they fail on every replica. Default 2.
   */
  readonly ejectAfterFailures?: number;
  /**
   * How many other endpoints a request may move to when it fails with a retryable error before
   * anything was delivered (a stream's first response). `0` turns failover off. Default 2. Under
   * `TritonLlm`, each move also counts as one of the call's `retry.attempts`.
   */
  readonly failoverAttempts?: number;
  /** With discovered endpoints: how often to discover again, in milliseconds; `0`: never. Default 30 000. */
  readonly refreshIntervalMs?: number;
}

/** A transport with the name its statistics carry (a URL, a host, a zone). */
export interface NamedTransport {
  readonly name: string;
  readonly transport: Transport;
}

/**
 * Endpoints that come and go, such as the addresses of a DNS name. `discover()` runs before the
 * first request and every `refreshIntervalMs`; each new address gets `connect(address)` once, and
 * an address no longer listed is closed after its running requests end.
 */
export interface ReplicaDiscovery {
  /** The protocol of every transport `connect` makes. */
  readonly protocol: Transport['protocol'];
  /** The addresses to use now; when it rejects, the endpoints already known are kept. */
  discover(): Promise<readonly string[]>;
  /** A transport to one discovered address, made once per address the first time it is listed. */
  connect(address: string): Transport;
}

/** Options of {@link replicaTransport}. */
export interface ReplicaTransportOptions extends ReplicaOptions {
  /** The replicas, one transport each (all of one protocol), or a way to discover them. */
  readonly endpoints: readonly (Transport | NamedTransport)[] | ReplicaDiscovery;
}

/** A {@link Transport} over several replicas of one Triton deployment, with its endpoints' statistics. */
export interface ReplicaTransport extends Transport, AsyncDisposable {
  /** A snapshot of every endpoint: state, in-flight and total requests, errors, latency. */
  endpointStats(): EndpointStats[];
  /** Runs one round of health checks now and resolves when every endpoint has its answer. */
  checkHealth(): Promise<void>;
}

const DEFAULTS = {
  healthIntervalMs: 5000,
  healthTimeoutMs: 2000,
  ejectAfterFailures: 2,
  failoverAttempts: 2,
  refreshIntervalMs: 30_000,
} as const;

/**
 * Balances requests over several replicas of one Triton deployment without a proxy: each request
 * goes to the healthy endpoint with the fewest requests in flight (ties take turns). Background
 * health checks eject endpoints that are not ready and bring them back when they are; a request
 * that fails with a retryable error before delivering anything moves to another endpoint (up to
 * `failoverAttempts`, within its `timeoutMs`). A stream never moves after its first response, and
 * its in-band stop goes to the endpoint that carries it. Metadata, config and health calls go to
 * any healthy endpoint. `close()` (or the end of an `await using` scope) closes every endpoint's
 * transport; without it, idle endpoints and their health checks never keep the process alive.
 *
 * Under `TritonLlm`, the client's retry plan (`CallOptions.retryPlan`) decides every move, with
 * the same rules as its own retries: `infer()` on an arbitrary model, whose connection broke after
 * it was sent, moves only with `retry.retryNonIdempotent`, and moves and backoff waits share the
 * call's `retry.attempts` and deadline (docs/RELIABILITY.md). Used directly, the transport moves
 * any request that failed retryably before its answer, up to `failoverAttempts` times.
 *
 * ```ts
 * const transport = replicaTransport({
 *   endpoints: [grpcTransport({ baseUrl: 'http://a:8001' }), grpcTransport({ baseUrl: 'http://b:8001' })],
 *   model: 'ensemble',
 * });
 * ```
 * (`grpcTransport({ baseUrls: [...] })`, `grpcTransport({ dns: 'triton:8001' })` and
 * `httpTransport({ baseUrls: [...] })` build the same thing.)
 */
export function replicaTransport(options: ReplicaTransportOptions): ReplicaTransport {
  const { source, protocol } = endpointSource(options.endpoints);
  const pool = new ReplicaPool(source, { protocol, ...replicaPolicy(options) });
  const close = () => pool.close();
  return {
    protocol,
    endpointStats: () => pool.stats(),
    checkHealth: () => pool.checkHealth(),
    infer: (request, call) => pool.call(call, true, (t, o) => t.infer(request, o)),
    stream: (request, call) => new ReplicaStream(pool, request, call),
    serverLive: (call) => pool.call(call, false, (t, o) => t.serverLive(o)),
    serverReady: (call) => pool.call(call, false, (t, o) => t.serverReady(o)),
    modelReady: (model, version, call) => pool.call(call, false, (t, o) => t.modelReady(model, version, o)),
    serverMetadata: (call) => pool.call(call, false, (t, o) => t.serverMetadata(o)),
    modelMetadata: (model, version, call) =>
      pool.call(call, false, (t, o) => t.modelMetadata(model, version, o)),
    modelConfig: (model, version, call) => pool.call(call, false, (t, o) => t.modelConfig(model, version, o)),
    modelStatistics: (model, version, call) =>
      pool.call(call, false, (t, o) => t.modelStatistics(model, version, o)),
    repositoryIndex: (call) =>
      pool.call(call, false, (t, o) =>
        t.repositoryIndex !== undefined
          ? t.repositoryIndex(o)
          : Promise.reject(new TritonLlmError('unimplemented', 'this transport cannot list the models')),
      ),
    close,
    [asyncDispose]: close,
  };
}

function endpointSource(endpoints: ReplicaTransportOptions['endpoints']): {
  source: EndpointSource;
  protocol: Transport['protocol'];
} {
  if (!Array.isArray(endpoints)) {
    const discovery = endpoints as ReplicaDiscovery;
    if (
      typeof discovery?.discover !== 'function' ||
      typeof discovery.connect !== 'function' ||
      (discovery.protocol !== 'grpc' && discovery.protocol !== 'http')
    ) {
      throw invalidArgument(
        'endpoints',
        endpoints,
        'must be a non-empty array of transports or { protocol, discover, connect }',
      );
    }
    return {
      source: {
        kind: 'discovered',
        discover: () => discovery.discover(),
        connect: (a) => discovery.connect(a),
      },
      protocol: discovery.protocol,
    };
  }
  const list = endpoints as readonly (Transport | NamedTransport)[];
  if (list.length === 0) throw invalidArgument('endpoints', endpoints, 'must list at least one transport');
  const named = list.map((e, i) => ('transport' in e ? e : { name: `endpoint-${i}`, transport: e }));
  const protocol = named[0]!.transport.protocol;
  const names = new Set<string>();
  named.forEach((e, i) => {
    if (typeof e.transport?.stream !== 'function' || typeof e.transport.infer !== 'function') {
      throw invalidArgument(`endpoints[${i}]`, e.transport, 'must be a Transport');
    }
    if (e.transport.protocol !== protocol) {
      throw invalidArgument(`endpoints[${i}]`, e.transport.protocol, `must be ${protocol} like endpoints[0]`);
    }
    if (typeof e.name !== 'string' || e.name === '' || names.has(e.name)) {
      throw invalidArgument(`endpoints[${i}].name`, e.name, 'must be a non-empty name no other endpoint has');
    }
    names.add(e.name);
  });
  return { source: { kind: 'fixed', endpoints: named }, protocol };
}

/** Validates the policy fields and fills in the defaults. */
function replicaPolicy(options: ReplicaOptions): Omit<PoolPolicy, 'protocol'> {
  const healthIntervalMs = atLeast(
    'healthIntervalMs',
    options.healthIntervalMs,
    0,
    DEFAULTS.healthIntervalMs,
  );
  const healthTimeoutMs =
    options.healthTimeoutMs === undefined
      ? Math.min(DEFAULTS.healthTimeoutMs, healthIntervalMs > 0 ? healthIntervalMs : DEFAULTS.healthTimeoutMs)
      : atLeast('healthTimeoutMs', options.healthTimeoutMs, 1, DEFAULTS.healthTimeoutMs);
  const ejectAfterFailures = count(
    'ejectAfterFailures',
    options.ejectAfterFailures,
    1,
    DEFAULTS.ejectAfterFailures,
  );
  const failoverAttempts = count('failoverAttempts', options.failoverAttempts, 0, DEFAULTS.failoverAttempts);
  const refreshIntervalMs = atLeast(
    'refreshIntervalMs',
    options.refreshIntervalMs,
    0,
    DEFAULTS.refreshIntervalMs,
  );
  if (options.model !== undefined && (typeof options.model !== 'string' || options.model === '')) {
    throw invalidArgument('model', options.model, 'must be a non-empty model name');
  }
  if (options.modelVersion !== undefined && typeof options.modelVersion !== 'string') {
    throw invalidArgument('modelVersion', options.modelVersion, 'must be a string');
  }
  return {
    healthIntervalMs,
    healthTimeoutMs,
    refreshIntervalMs,
    model: options.model,
    modelVersion: options.modelVersion,
    ejectAfterFailures,
    failoverAttempts,
  };
}

function atLeast(field: string, value: number | undefined, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw invalidArgument(field, value, `must be a number of milliseconds >= ${min}`);
  }
  return value;
}

function count(field: string, value: number | undefined, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) {
    throw invalidArgument(field, value, `must be a whole number >= ${min}`);
  }
  return value;
}
