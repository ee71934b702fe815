import { startFakeTriton } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import {
  bool,
  carriesTensors,
  connect,
  inferRequest,
  output,
  streamAll,
  textInputs,
} from './support/grpc-client.js';

type Config = {
  input: { name: string; dims: number[] }[];
  output: { name: string }[];
  model_transaction_policy: { decoupled: boolean };
};

async function withFake<T>(
  options: Parameters<typeof startFakeTriton>[0],
  run: (url: string, http: string) => Promise<T>,
): Promise<T> {
  const fake = await startFakeTriton(options);
  try {
    return await run(fake.grpcUrl, fake.httpUrl);
  } finally {
    await fake.close();
  }
}

const config = (http: string, model: string) =>
  fetch(`${http}/v2/models/${model}/config`).then((r) => r.json() as Promise<Config>);
const names = (c: Config) => c.input.map((i) => i.name);

describe('the model repository', () => {
  it('declares the newest tensor names by default', async () => {
    await withFake({}, async (_grpc, http) => {
      const ens = await config(http, 'ensemble');
      expect(names(ens)).toEqual(
        expect.arrayContaining(['min_tokens', 'seed', 'return_num_output_tokens', 'num_return_sequences']),
      );
      expect(names(ens)).not.toContain('min_length');
      expect(ens.input.find((i) => i.name === 'max_tokens')?.dims).toEqual([1]);
      expect(ens.output.map((o) => o.name)).toContain('num_output_tokens');
      expect(names(await config(http, 'tensorrt_llm'))).toEqual(
        expect.arrayContaining(['min_tokens', 'seed', 'stop', 'streaming']),
      );
    });
  });

  it('declares the v0.11 names when asked', async () => {
    await withFake({ backendVersion: 'v0.11' }, async (_grpc, http) => {
      const ens = await config(http, 'ensemble');
      expect(names(ens)).toEqual(expect.arrayContaining(['min_length', 'random_seed']));
      expect(names(ens)).not.toContain('seed');
      expect(names(ens)).not.toContain('num_return_sequences');
      expect(ens.input.find((i) => i.name === 'max_tokens')?.dims).toEqual([-1]);
      expect(ens.output.map((o) => o.name)).not.toContain('num_output_tokens');
      expect(names(await config(http, 'tensorrt_llm'))).toContain('random_seed');
    });
  });

  it('reports num_input_tokens and num_output_tokens when asked', async () => {
    await withFake({}, async (grpc) => {
      const client = connect(grpc);
      const { messages } = await streamAll(client, [
        inferRequest(
          'ensemble',
          textInputs('Hello', 3, [
            bool('return_num_input_tokens', true),
            bool('return_num_output_tokens', true),
          ]),
        ),
      ]);
      client.close();
      const r = messages[0]!.infer_response!;
      expect(output(r, 'num_input_tokens').values).toEqual([1]);
      expect(output(r, 'num_output_tokens').values).toEqual([3]);
    });
  });

  it('follows decoupled overrides: an ensemble over a non-decoupled generator is not decoupled', async () => {
    await withFake({ decoupled: { tensorrt_llm: false } }, async (grpc, http) => {
      expect((await config(http, 'tensorrt_llm')).model_transaction_policy.decoupled).toBe(false);
      expect((await config(http, 'ensemble')).model_transaction_policy.decoupled).toBe(false);
      const client = connect(grpc);
      const r = await client.unary<Parameters<typeof output>[0]>(
        'ModelInfer',
        inferRequest('ensemble', textInputs('Hi', 2)),
      );
      client.close();
      expect(output(r, 'text_output').values).toHaveLength(1);
    });
  });

  it('makes tensorrt_llm_bls send per-token text with accumulateTokens false', async () => {
    await withFake({ accumulateTokens: false }, async (grpc) => {
      const client = connect(grpc);
      const { messages } = await streamAll(client, [
        inferRequest('tensorrt_llm_bls', textInputs('Hello', 3, [bool('stream', true)])),
      ]);
      client.close();
      const per = messages.map((m) => m.infer_response!).filter(carriesTensors);
      const ens = await (async () => {
        const c = connect(grpc);
        const res = await streamAll(c, [
          inferRequest('ensemble', textInputs('Hello', 3, [bool('stream', true)])),
        ]);
        c.close();
        return res.messages.map((m) => m.infer_response!).filter(carriesTensors);
      })();
      expect(per.map((r) => output(r, 'text_output').values[0])).toEqual(
        ens.map((r) => output(r, 'text_output').values[0]),
      );
    });
  });
});
