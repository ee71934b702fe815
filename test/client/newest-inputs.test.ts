import {
  type GenerateRequest,
  type InferRequest,
  type Tensor,
  type Transport,
  TritonLlm,
  TritonLlmError,
  tensorNumbers,
  tensorStrings,
} from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, type Protocol, useFakeTriton } from '../support/fake.js';

/**
 * The transport as the client hands it requests, with each request kept: what reached the wire.
 * The fake validates every input against the newest configs (names, data types, shapes), so a
 * request it answers was shaped as NVIDIA's models declare.
 */
function recorded(transport: Transport): { readonly transport: Transport; readonly sent: InferRequest[] } {
  const sent: InferRequest[] = [];
  const wrapped = new Proxy(transport, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if ((key === 'infer' || key === 'stream') && typeof value === 'function') {
        return (request: InferRequest, ...rest: unknown[]) => {
          sent.push(request);
          return (value as (...args: unknown[]) => unknown).call(target, request, ...rest);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { transport: wrapped, sent };
}

function input(request: InferRequest | undefined, name: string): Tensor | undefined {
  return request?.inputs.find((t) => t.name === name);
}

async function refusal(run: Promise<unknown>): Promise<TritonLlmError> {
  const err = await run.catch((e: unknown) => e);
  if (!(err instanceof TritonLlmError)) throw new Error(`expected a TritonLlmError, got ${String(err)}`);
  return err;
}

describe.each(PROTOCOLS)('the newest inputs and outputs over %s', (protocol: Protocol) => {
  const fake = useFakeTriton();
  const client = (model: string) => {
    const { transport, sent } = recorded(fake.transport(protocol));
    return { llm: new TritonLlm({ transport, model }), sent };
  };

  it('reads the LLM-API perf metrics, sent as strings under their own kv-cache names', async () => {
    const { llm } = client('llmapi');
    const before = BigInt(Date.now()) * 1_000_000n;
    const result = await llm.generate({ prompt: 'Hello there', maxTokens: 5, returnPerfMetrics: true });
    const m = result.perfMetrics;
    expect(m?.kvCacheReusedBlocks).toBe(0);
    expect(m?.kvCacheHitRate).toBe(0);
    expect(m?.kvCacheMissedBlocks).toBeGreaterThanOrEqual(1);
    expect(m?.kvCacheAllocNewBlocks).toBe(m?.kvCacheMissedBlocks);
    expect(m?.totalDraftTokens).toBe(0);
    expect(typeof m?.arrivalTimeNs).toBe('bigint');
    // Epoch nanoseconds, read exactly from their decimal string.
    expect(m!.arrivalTimeNs! > before - 1_000_000_000n && m!.arrivalTimeNs! < before + 1_000_000_000n).toBe(
      true,
    );
    expect(m!.lastTokenTimeNs! >= m!.firstTokenTimeNs!).toBe(true);
  });

  it('sends the LLM-API model lora_ckpt_source, and refuses a format it does not know', async () => {
    const { llm, sent } = client('llmapi');
    const lora = { taskId: 3, name: 'adapter', path: '/adapters/a', ckptSource: 'nemo' } as const;
    await llm.generate({ prompt: 'Hi', maxTokens: 2, lora });
    expect(tensorStrings(input(sent.at(-1), 'lora_ckpt_source')!)).toEqual(['nemo']);
    const err = await refusal(
      llm.generate({
        prompt: 'Hi',
        maxTokens: 2,
        lora: { ...lora, ckptSource: 'peft' } as unknown as typeof lora,
      }),
    );
    expect(err.field).toBe('lora.ckptSource');
    expect(err.message).toContain('"peft"');
  });

  it('sends the raw model per-request lookahead and KV-cache retention', async () => {
    const { llm, sent } = client('tensorrt_llm');
    const request: GenerateRequest = {
      inputIds: [5, 6, 7, 8],
      maxTokens: 3,
      lookahead: { windowSize: 4, ngramSize: 3, verificationSetSize: 2 },
      kvCacheRetention: {
        tokenRanges: [
          [0, 2, 80],
          [2, 4, 30],
        ],
        tokenRangeDurationsMs: [1000, 500],
        decodePriority: 10,
        decodeDurationMs: 250,
      },
    };
    const result = await llm.generate(request);
    expect(result.sequences[0]?.tokenIds.length).toBe(3);
    const wire = sent.at(-1);
    const values = (name: string) => tensorNumbers(input(wire, name)!);
    expect(values('lookahead_window_size')).toEqual([4]);
    expect(values('lookahead_ngram_size')).toEqual([3]);
    expect(values('lookahead_verification_set_size')).toEqual([2]);
    expect(values('retention_token_range_starts')).toEqual([0, 2]);
    expect(values('retention_token_range_ends')).toEqual([2, 4]);
    expect(values('retention_token_range_priorities')).toEqual([80, 30]);
    expect(values('retention_token_range_durations_ms')).toEqual([1000, 500]);
    expect(values('retention_decode_priority')).toEqual([10]);
    expect(values('retention_decode_duration_ms')).toEqual([250]);
  });

  it('refuses retention durations that do not match the token ranges', async () => {
    const { llm, sent } = client('tensorrt_llm');
    const err = await refusal(
      llm.generate({
        inputIds: [5, 6],
        maxTokens: 2,
        kvCacheRetention: { tokenRanges: [[0, 2, 50]], tokenRangeDurationsMs: [1, 2] },
      }),
    );
    expect(err.field).toBe('kvCacheRetention.tokenRangeDurationsMs');
    expect(sent).toEqual([]);
  });

  it('refuses promptTableExtraId for the raw model, with the reason, and sends it to the ensemble', async () => {
    const raw = client('tensorrt_llm');
    const err = await refusal(raw.llm.generate({ inputIds: [5, 6], maxTokens: 2, promptTableExtraId: 7 }));
    expect(err).toMatchObject({
      code: 'invalid_argument',
      field: 'promptTableExtraId',
      model: 'tensorrt_llm',
    });
    expect(err.message).toContain('one id per prompt');
    expect(raw.sent).toEqual([]);
    const ensemble = client('ensemble');
    await ensemble.llm.generate({ prompt: 'Hi', maxTokens: 2, promptTableExtraId: 7 });
    expect(tensorNumbers(input(ensemble.sent.at(-1), 'prompt_table_extra_id')!)).toEqual([7]);
  });

  it("sends earlyStopping as the model declares it: BOOL to the raw model, 1 to the disaggregated BLS's INT32", async () => {
    const raw = client('tensorrt_llm');
    await raw.llm.generate({ inputIds: [5, 6], maxTokens: 2, beamWidth: 2, earlyStopping: true });
    expect(input(raw.sent.at(-1), 'early_stopping')?.datatype).toBe('BOOL');
    const disaggregated = client('disaggregated_serving_bls');
    const result = await disaggregated.llm.generate({
      inputIds: [5, 6],
      maxTokens: 2,
      earlyStopping: true,
      promptIgnoreLength: 1,
    });
    expect(result.sequences[0]?.tokenIds.length).toBe(2);
    const early = input(disaggregated.sent.at(-1), 'early_stopping');
    expect(early?.datatype).toBe('INT32');
    expect(tensorNumbers(early!)).toEqual([1]);
    expect(tensorNumbers(input(disaggregated.sent.at(-1), 'prompt_ignore_length')!)).toEqual([1]);
  });

  it('refuses promptIgnoreLength on a model without it, naming the option and the model', async () => {
    const { llm } = client('tensorrt_llm');
    const err = await refusal(llm.generate({ inputIds: [5, 6], maxTokens: 2, promptIgnoreLength: 1 }));
    expect(err).toMatchObject({ field: 'promptIgnoreLength', model: 'tensorrt_llm' });
    expect(err.message).toContain("'prompt_ignore_length'");
  });

  it("refuses tensorrtLlmModelName on NVIDIA's BLS, where it is a config parameter", async () => {
    const { llm } = client('tensorrt_llm_bls');
    const err = await refusal(llm.generate({ prompt: 'Hi', maxTokens: 2, tensorrtLlmModelName: 'other' }));
    expect(err).toMatchObject({ field: 'tensorrtLlmModelName', model: 'tensorrt_llm_bls' });
  });
});
