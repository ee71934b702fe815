import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

describe.each(PROTOCOLS)('schema-aware mapping over %s (newest backend)', (protocol) => {
  const fake = useFakeTriton();

  it('detects each flavor from the deployed config', async () => {
    const flavors = await Promise.all(
      ['ensemble', 'tensorrt_llm_bls', 'tensorrt_llm', 'llmapi'].map(async (model) => {
        const llm = new TritonLlm({ transport: fake.transport(protocol), model });
        const s = await llm.schema();
        return [s.flavor, s.backendVersion, s.decoupled] as const;
      }),
    );
    expect(flavors).toEqual([
      ['ensemble', '2026', true],
      ['bls', '2026', true],
      ['tensorrt_llm', '2026', true],
      ['llmapi', 'llmapi', true],
    ]);
  });

  it('refuses an option the deployed model lacks, naming model and option, before sending', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const before = fake.triton().events().length;
    const err = await llm.generate({ prompt: 'hi', maxTokens: 3, topPMin: 0.1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expect((err as TritonLlmError).message).toContain("'ensemble'");
    expect((err as TritonLlmError).message).toContain('topPMin');
    expect(fake.triton().events().length).toBe(before);
  });

  it('refuses unknown option keys from plain JavaScript before sending', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const before = fake.triton().events().length;
    const bad = { prompt: 'hi', maxTokens: 3, max_tokens: 3 } as unknown as Parameters<
      typeof llm.generate
    >[0];
    const err = await llm.generate(bad).catch((e: unknown) => e);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expect((err as TritonLlmError).message).toContain('max_tokens');
    expect(fake.triton().events().length).toBe(before);
  });

  it('maps minTokens and seed on the newest names', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const result = await llm.generate({ inputIds: [259], maxTokens: 8, seed: 5, minTokens: 2 });
    expect(result.sequences[0]?.tokenIds).toEqual(
      generateTokens([259], { maxTokens: 8, seed: 5 })[0]?.tokens,
    );
  });

  it('reads the LLM-API model finish reason', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'llmapi' });
    const result = await llm.generate({ prompt: 'What is ML?', maxTokens: 7 });
    expect(result.finishReason).toBe('length');
    const expected = fakeTokenizer.decode(
      generateTokens(fakeTokenizer.encode('What is ML?'), { maxTokens: 7 })[0]!.tokens,
    );
    expect(result.text).toBe(expected);
  });

  it('answers health, readiness, metadata, config and statistics', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    expect(await llm.health()).toBe(true);
    expect(await llm.ready()).toBe(true);
    expect(await llm.modelReady()).toBe(true);
    expect((await llm.serverMetadata()).name).toBe('triton');
    const config = await llm.modelConfig();
    expect(config.platform).toBe('ensemble');
    expect(config.inputs.find((i) => i.name === 'text_input')?.datatype).toBe('BYTES');
    const metadata = await llm.modelMetadata();
    expect(metadata.inputs.map((i) => i.name)).toContain('max_tokens');
    await llm.generate({ prompt: 'hi', maxTokens: 2 });
    const [stats] = await llm.statistics();
    expect(stats?.name).toBe('ensemble');
    expect(stats?.inferenceCount).toBeGreaterThan(0);
  });

  it('says when the model is not there', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'nope' });
    const err = await llm.generate({ prompt: 'hi', maxTokens: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect(['not_found', 'unavailable', 'invalid_argument']).toContain((err as TritonLlmError).code);
    expect((err as TritonLlmError).message).toContain('nope');
  });
});

describe.each(PROTOCOLS)('schema-aware mapping over %s (v0.11 backend names)', (protocol) => {
  const fake = useFakeTriton({ backendVersion: 'v0.11' });

  it('sends minTokens as min_length and seed as random_seed', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    expect((await llm.schema()).backendVersion).toBe('v0.11');
    const result = await llm.generate({ inputIds: [259], maxTokens: 8, seed: 3, minTokens: 1 });
    expect(result.sequences[0]?.tokenIds).toEqual(
      generateTokens([259], { maxTokens: 8, seed: 3 })[0]?.tokens,
    );
  });

  it('refuses an option that backend does not have yet', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const err = await llm
      .generate({ prompt: 'hi', maxTokens: 3, numReturnSequences: 2 })
      .catch((e: unknown) => e);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expect((err as TritonLlmError).message).toMatch(
      /numReturnSequences.*'ensemble'|'ensemble'.*numReturnSequences/,
    );
  });
});
