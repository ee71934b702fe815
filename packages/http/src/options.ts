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
   * Largest answer read from the server, in bytes; default 64 MiB, the gRPC transport's
   * `maxReceiveMessageBytes`. A unary response, a single event of a stream or a chunk announced
   * on the wire that is larger fails with `resource_exhausted` as soon as its size is known, before
   * the memory is spent.
   */
  readonly maxResponseBytes?: number;
  /**
   * Liveness of a stream, in milliseconds: a `generate_stream` answer that has begun (its head
   * arrived) and then receives no byte for this long fails with `unavailable` (retryable) and its
   * connection is closed, so a frozen server (SIGSTOP, a hung host) or a peer lost without a word
   * does not hold the stream for ever. HTTP/1.1 has no PING; Triton writes every response as it
   * comes, so only a server that stopped answering is silent that long. Default 345 000 (5.75 min),
   * when the gRPC transport gives up on a frozen server (keepalive 330 s plus its 15 s timeout);
   * `0` turns it off. Before the head the deadline applies (`timeoutMs`): that wait is the
   * server's queue and the prompt.
   */
  readonly silenceTimeoutMs?: number;
}

/**
 * `maxResponseBytes` when none is given: the gRPC transport's message limit (its
 * DEFAULT_MAX_RECEIVE_BYTES, which test/reliability/hostile-http1.test.ts checks this against), so
 * one answer costs the same at most over either protocol. Without it one event of a stream that
 * never ends grew the client by its whole size (issue 55).
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * `silenceTimeoutMs` when none is given: as long as the gRPC transport holds a stream on a frozen
 * server (keepaliveMs 330 000 plus keepaliveTimeoutMs 15 000), so a frozen server costs the same
 * over either protocol. Without it an HTTP stream on a frozen server waited for ever (issue 55).
 */
export const DEFAULT_SILENCE_TIMEOUT_MS = 345_000;

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
  silenceTimeoutMs: true,
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
