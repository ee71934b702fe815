import type { ReplicaOptions } from '@trtllm/sdk';
import { checkOptionNames } from '@trtllm/sdk/transport';

/**
 * The `fetch` the transport calls: the global one by default. Any function of this shape works,
 * e.g. one that adds tracing, goes through a proxy agent, or records requests in a test.
 */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

/** Options of {@link httpTransport}. */
export interface HttpTransportOptions {
  /**
   * The server's HTTP endpoint, e.g. `http://localhost:8000` (Triton's HTTP port is 8000; 8001 is
   * gRPC). A path prefix is kept, so a server behind a proxy at `https://host/triton` works.
   */
  readonly baseUrl: string;
  /** Replaces the global `fetch`, e.g. to add tracing or a custom agent. */
  readonly fetch?: FetchFunction;
  /** Headers sent with every call (e.g. `authorization`); per-call headers override them by name. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Deadline of every call that does not set its own `timeoutMs`; default: none. */
  readonly timeoutMs?: number;
  /**
   * Largest response body read from the server, in bytes; default: no limit. A unary response
   * (and each single event of a stream) that is larger fails with `resource_exhausted`.
   */
  readonly maxResponseBytes?: number;
}

/**
 * Options of {@link httpTransport} over several Triton replicas: one transport per URL, requests
 * balanced over them. (`fetch` has no resolver, so there is no DNS option: list the URLs.)
 */
export interface HttpReplicaTransportOptions extends Omit<HttpTransportOptions, 'baseUrl'>, ReplicaOptions {
  /** The replicas' HTTP endpoints, e.g. `http://host-a:8000`; statistics are named by them. */
  readonly baseUrls: readonly string[];
  readonly baseUrl?: never;
}

// Every option's name, typed against the interfaces so that none can be left out: a key that is
// none of these (`baseURL`, `timeout`) is refused with the closest name (issue 53).
const OPTION_NAMES: Readonly<Record<keyof HttpTransportOptions | keyof HttpReplicaTransportOptions, true>> = {
  baseUrl: true,
  fetch: true,
  headers: true,
  timeoutMs: true,
  maxResponseBytes: true,
  baseUrls: true,
  healthIntervalMs: true,
  healthTimeoutMs: true,
  model: true,
  modelVersion: true,
  ejectAfterFailures: true,
  failoverAttempts: true,
  refreshIntervalMs: true,
};

/** The options of {@link httpTransport} have only known names. */
export function checkHttpOptionNames(options: HttpTransportOptions | HttpReplicaTransportOptions): void {
  if (typeof options === 'object' && options !== null) checkOptionNames(options, OPTION_NAMES);
}
