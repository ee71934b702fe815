import { status as grpcStatus } from '@grpc/grpc-js';
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, fakeTokenizer, generateTokens, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repositoryControl, startExplicitTriton } from './own-triton.js';
import { REAL_SKIPPED, type ServerKind } from './servers.js';

// Explicit model control (`--model-control-mode=explicit`), the same steps on the fake
// (`modelControl: 'explicit'`) and on a real Triton of its own, each loading the ensemble (which
// brings the three models it composes) and tensorrt_llm_bls at start. What each step expects is
// what Triton 2.51 answered.
const AT_START = ['ensemble', 'tensorrt_llm_bls'];
const LOADED = ['ensemble', 'postprocessing', 'preprocessing', 'tensorrt_llm', 'tensorrt_llm_bls'];
const PROMPT = 'What is ML?';
const NOT_READY = { status: 400, type: 'text/plain', body: '{"error":"Model version not ready"}' };

interface Servers {
  readonly http: string;
  readonly grpc: string;
  stop(): Promise<void> | void;
}

interface IndexEntry {
  readonly name: string;
  readonly version?: string;
  readonly state?: string;
  readonly reason?: string;
}

async function answer(url: string, method = 'GET'): Promise<{ status: number; type: string; body: string }> {
  const r = await fetch(url, { method, ...(method === 'POST' ? { body: '{}' } : {}) });
  return {
    status: r.status,
    type: (r.headers.get('content-type') ?? '').split(';')[0]!,
    body: await r.text(),
  };
}

async function index(http: string): Promise<IndexEntry[]> {
  return (await (await fetch(`${http}/v2/repository/index`, { method: 'POST' })).json()) as IndexEntry[];
}

/** The index once `model` has left the UNLOADING state Triton shows while its stub process ends. */
async function indexAfterUnload(http: string, model: string): Promise<IndexEntry[]> {
  for (;;) {
    const entries = await index(http);
    if (entries.find((m) => m.name === model)?.state !== 'UNLOADING') return entries;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const served = (entries: readonly IndexEntry[]) =>
  entries.filter((m) => m.state === 'READY').map((m) => m.name);

describe.each(['fake', 'real'] as const)('explicit model control on the %s Triton', (kind: ServerKind) => {
  let servers: Servers;
  beforeAll(async () => {
    if (kind === 'fake') {
      const fake: FakeTriton = await startFakeTriton({ modelControl: 'explicit', loadModels: AT_START });
      servers = { http: fake.httpUrl, grpc: fake.grpcUrl, stop: () => fake.close() };
    } else {
      const real = await startExplicitTriton(AT_START);
      servers = { http: real.http, grpc: real.grpc.replace('grpc://', 'http://'), stop: real.stop };
    }
  });
  afterAll(() => servers?.stop());
  // The real half needs a real Triton; off CI without one it is listed as skipped.
  const step = kind === 'real' && REAL_SKIPPED ? it.skip : it;

  step(
    'loads what --load-model names, an ensemble with its models; the others are listed by name only',
    async () => {
      const entries = await index(servers.http);
      expect(served(entries)).toEqual(LOADED);
      expect(entries.find((m) => m.name === 'llmapi')).toEqual({ name: 'llmapi' });
      expect(entries.map((m) => m.name)).toEqual([...entries.map((m) => m.name)].sort());
      // A model never loaded is unknown to every call but the index.
      expect(await answer(`${servers.http}/v2/models/llmapi/ready`)).toEqual(NOT_READY);
      expect(await answer(`${servers.http}/v2/models/llmapi`)).toEqual({
        status: 404,
        type: 'application/json',
        body: `{"error":"Request for unknown model: 'llmapi' is not found"}`,
      });
    },
  );

  step(
    'answers a load of a model the repository lacks with 500 / INTERNAL, an unload of it with 200',
    async () => {
      const message = "failed to load 'nosuch', failed to poll from model repository";
      expect(await answer(`${servers.http}/v2/repository/models/nosuch/load`, 'POST')).toEqual({
        status: 500,
        type: 'application/json',
        body: JSON.stringify({ error: message }),
      });
      const err = await repositoryControl(servers.grpc, 'load', 'nosuch');
      expect(err?.code).toBe(grpcStatus.INTERNAL);
      expect(err?.details).toBe(message);
      expect(await answer(`${servers.http}/v2/repository/models/nosuch/unload`, 'POST')).toEqual({
        status: 200,
        type: 'application/json',
        body: '',
      });
      expect(await repositoryControl(servers.grpc, 'unload', 'nosuch')).toBeNull();
    },
  );

  step(
    'unloading tensorrt_llm unloads the ensemble with it; the BLS stays ready and fails each request',
    async () => {
      expect((await answer(`${servers.http}/v2/repository/models/tensorrt_llm/unload`, 'POST')).status).toBe(
        200,
      );
      const entries = await indexAfterUnload(servers.http, 'tensorrt_llm');
      const unloaded = { version: '1', state: 'UNAVAILABLE', reason: 'unloaded' };
      expect(entries.find((m) => m.name === 'tensorrt_llm')).toEqual({ name: 'tensorrt_llm', ...unloaded });
      expect(entries.find((m) => m.name === 'ensemble')).toEqual({ name: 'ensemble', ...unloaded });
      expect(served(entries)).toEqual(['postprocessing', 'preprocessing', 'tensorrt_llm_bls']);

      expect(await answer(`${servers.http}/v2/models/ensemble/ready`)).toEqual(NOT_READY);
      const gone = `{"error":"Request for unknown model: 'ensemble' has no available versions"}`;
      expect(await answer(`${servers.http}/v2/models/ensemble`)).toEqual({
        status: 404,
        type: 'application/json',
        body: gone,
      });
      expect(await answer(`${servers.http}/v2/models/ensemble/stats`)).toEqual({
        status: 400,
        type: 'application/json',
        body: `{"error":"requested model 'ensemble' is not available"}`,
      });

      const llm = (model: string) =>
        new TritonLlm({
          transport: grpcTransport({ baseUrl: servers.grpc }),
          model,
          tokenizer: fakeTokenizer,
        });
      expect(await llm('ensemble').modelReady()).toBe(false);
      const ensembleErr = await llm('ensemble')
        .generate({ prompt: PROMPT, maxTokens: 2 })
        .catch((e: unknown) => e);
      expect(ensembleErr).toBeInstanceOf(TritonLlmError);
      expect((ensembleErr as TritonLlmError).code).toBe('not_found');

      expect(await llm('tensorrt_llm_bls').modelReady()).toBe(true);
      const blsErr = await llm('tensorrt_llm_bls')
        .generate({ prompt: PROMPT, maxTokens: 2 })
        .catch((e: unknown) => e);
      expect(blsErr).toBeInstanceOf(TritonLlmError);
      // Retryable: the model may be loaded again (the gateway answers 503).
      expect((blsErr as TritonLlmError).code).toBe('unavailable');
      expect((blsErr as TritonLlmError).message).toContain("Model 'tensorrt_llm' is not ready.");
    },
  );

  step('loading tensorrt_llm again (over gRPC) brings the ensemble back, which then serves', async () => {
    expect(await repositoryControl(servers.grpc, 'load', 'tensorrt_llm')).toBeNull();
    // Triton loads the ensemble after answering the load.
    for (;;) {
      if (served(await index(servers.http)).includes('ensemble')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(served(await index(servers.http))).toEqual(LOADED);
    const llm = new TritonLlm({ transport: grpcTransport({ baseUrl: servers.grpc }), model: 'ensemble' });
    const r = await llm.generate({ prompt: PROMPT, maxTokens: 3 });
    expect(r.text).toBe(
      fakeTokenizer.decode(generateTokens(fakeTokenizer.encode(PROMPT), { maxTokens: 3 })[0]!.tokens),
    );
  });
});
