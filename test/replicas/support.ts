import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import {
  createTensor,
  type InferRequest,
  type InferResponse,
  type ReplicaOptions,
  type ReplicaTransport,
  type TritonLlm,
  tensorNumbers,
} from '@trtllm/sdk';
import { type FakeEvent, type FakeTriton, type FakeTritonOptions, startFakeTriton } from '@trtllm/testing';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { freePorts, type ServerProcess, startFakeCli } from '../reliability/support/processes.js';

export type Protocol = 'grpc' | 'http';
export const PROTOCOLS: readonly Protocol[] = ['grpc', 'http'];

/** Three fake Tritons on loopback for one test file; `restart(i)` brings one back on its ports. */
export interface Replicas {
  fake(i: number): FakeTriton;
  urls(protocol: Protocol): string[];
  /** The fake's requests (`received` events) for `model`, or for the request `id` when given. */
  received(i: number, model: string, id?: string): FakeEvent[];
  kill(i: number): Promise<void>;
  restart(i: number): Promise<void>;
  /** A replica transport over the three, closed after the test. */
  transport(protocol: Protocol, options?: ReplicaOptions): ReplicaTransport;
}

export function useThreeFakes(options: readonly FakeTritonOptions[] = [{}, {}, {}]): Replicas {
  const fakes: (FakeTriton | undefined)[] = [];
  const ports: { grpcPort: number; httpPort: number }[] = [];
  const transports: ReplicaTransport[] = [];
  const fake = (i: number): FakeTriton => {
    const f = fakes[i];
    if (f === undefined) throw new Error(`fake ${i} is not running`);
    return f;
  };
  const urlsOf = (protocol: Protocol): string[] =>
    ports.map((p) => `http://127.0.0.1:${protocol === 'grpc' ? p.grpcPort : p.httpPort}`);
  beforeAll(async () => {
    for (const o of options) {
      const f = await startFakeTriton(o);
      fakes.push(f);
      ports.push({ grpcPort: f.grpcPort, httpPort: f.httpPort });
    }
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
    for (const f of fakes) {
      f?.setFaults(undefined);
      f?.clearEvents();
    }
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f?.close()));
  });
  return {
    fake,
    urls: (protocol) => urlsOf(protocol),
    received: (i, model, id) =>
      fake(i)
        .events()
        .filter((e) => e.event === 'received' && e.model === model && (id === undefined || e.id === id)),
    kill: async (i) => {
      await fake(i).close();
      fakes[i] = undefined;
    },
    restart: async (i) => {
      fakes[i] = await startFakeTriton({ ...options[i], ...ports[i] });
    },
    transport: (protocol, replicaOptions = {}) => {
      const urls = urlsOf(protocol);
      const t =
        protocol === 'grpc'
          ? grpcTransport({ baseUrls: urls, ...replicaOptions })
          : httpTransport({ baseUrls: urls, ...replicaOptions });
      transports.push(t);
      return t;
    },
  };
}

/** The stats of the endpoint serving `url`. */
export function statsOf(t: ReplicaTransport, url: string) {
  const s = t.endpointStats().find((e) => e.name === url);
  if (s === undefined) throw new Error(`no endpoint named ${url}`);
  return s;
}

/** A request to the raw `tensorrt_llm` model (streamed) or its unary twin for `maxTokens` tokens after `inputIds`. */
export function rawRequest(
  id: string,
  inputIds: readonly number[],
  maxTokens: number,
  model: 'tensorrt_llm' | 'tensorrt_llm_unary' = 'tensorrt_llm',
): InferRequest {
  return {
    model,
    id,
    inputs: [
      createTensor('input_ids', 'INT32', [1, inputIds.length], [...inputIds]),
      createTensor('input_lengths', 'INT32', [1, 1], [inputIds.length]),
      createTensor('request_output_len', 'INT32', [1, 1], [maxTokens]),
      createTensor('streaming', 'BOOL', [1, 1], [model === 'tensorrt_llm']),
    ],
  };
}

/** The raw model's in-band stop of the running request `id`. */
export function stopRequest(id: string): InferRequest {
  return {
    model: 'tensorrt_llm',
    id,
    inputs: [
      createTensor('input_ids', 'INT32', [1, 1], [0]),
      createTensor('input_lengths', 'INT32', [1, 1], [0]),
      createTensor('request_output_len', 'INT32', [1, 1], [0]),
      createTensor('stop', 'BOOL', [1, 1], [true]),
    ],
  };
}

/** The token ids a raw streaming response carries. */
export function tokenIds(r: InferResponse): number[] {
  const ids = r.outputs.find((t) => t.name === 'output_ids');
  return ids === undefined ? [] : tensorNumbers(ids);
}

/**
 * Two fake Triton processes per test, a healthy one and one to freeze (SIGSTOP), on free ports;
 * after each test they are thawed and killed and the transports given to `track` closed.
 */
export function useFreezablePair(): {
  start(itlMs: number): Promise<{ healthy: ServerProcess; frozen: ServerProcess }>;
  track<T extends ReplicaTransport>(transport: T): T;
} {
  let servers: ServerProcess[] = [];
  let transports: ReplicaTransport[] = [];
  afterEach(async () => {
    await Promise.all(transports.map((t) => t.close()));
    for (const s of servers) {
      await s.signal('SIGCONT');
      await s.signal('SIGKILL');
    }
    servers = [];
    transports = [];
  });
  return {
    start: async (itlMs) => {
      const [a, b, c, d] = await freePorts(4);
      const healthy = await startFakeCli({ grpc: a!, http: b! }, itlMs);
      const frozen = await startFakeCli({ grpc: c!, http: d! }, itlMs);
      servers.push(healthy, frozen);
      return { healthy, frozen };
    },
    track: (transport) => {
      transports.push(transport);
      return transport;
    },
  };
}

/** One request of a load: when it started relative to the freeze (undefined: before it) and how it ended. */
export interface LoadOutcome {
  readonly startedAfterFreezeMs: number | undefined;
  readonly ok: boolean;
  readonly code?: string | undefined;
}

/**
 * How long a request of the load may hear nothing before it ends: it frees the workers the freeze
 * caught, within the tests' 3.5 s after it. Not shorter: on a busy machine the healthy replica (in
 * the conformance suite, the shared real Triton) can pause for half a second, and each idle timeout
 * there is a cancel racing the request's last responses, the race that crashed Triton 2.51's gRPC
 * handler before (docs/RELIABILITY.md). The freeze itself is seen by the replica layer's stall probe.
 */
const LOAD_IDLE_TIMEOUT_MS = 2000;

/**
 * `workers` loops sending `request` until stopped, each answer checked against `expected`: the load a
 * replica is frozen under. `markFrozen()` records the freeze (and returns its time) so each outcome
 * says whether its request started after it.
 */
export function loadWorkers(
  llm: TritonLlm,
  workers: number,
  request: { readonly inputIds: readonly number[]; readonly maxTokens: number },
  expected: readonly number[],
): { readonly outcomes: readonly LoadOutcome[]; markFrozen(): number; stop(): Promise<void> } {
  let frozenAt: number | undefined;
  let stopping = false;
  const outcomes: LoadOutcome[] = [];
  const worker = async (): Promise<void> => {
    while (!stopping) {
      const started = performance.now();
      const startedAfterFreezeMs = frozenAt === undefined ? undefined : started - frozenAt;
      try {
        const result = await llm.generate(
          { inputIds: [...request.inputIds], maxTokens: request.maxTokens },
          { idleTimeoutMs: LOAD_IDLE_TIMEOUT_MS },
        );
        expect(result.sequences[0]?.tokenIds).toEqual(expected);
        outcomes.push({ startedAfterFreezeMs, ok: true });
      } catch (err) {
        outcomes.push({ startedAfterFreezeMs, ok: false, code: (err as { code?: string }).code });
      }
    }
  };
  const running = Array.from({ length: workers }, worker);
  return {
    outcomes,
    markFrozen: () => {
      frozenAt = performance.now();
      return frozenAt;
    },
    stop: async () => {
      stopping = true;
      await Promise.all(running);
    },
  };
}
