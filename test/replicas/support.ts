import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import {
  createTensor,
  type InferRequest,
  type InferResponse,
  type ReplicaOptions,
  type ReplicaTransport,
  tensorNumbers,
} from '@trtllm/sdk';
import { type FakeEvent, type FakeTriton, type FakeTritonOptions, startFakeTriton } from '@trtllm/testing';
import { afterAll, afterEach, beforeAll } from 'vitest';

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
