import { HumanMessage } from '@langchain/core/messages';
import { ChatTriton, type ChatTritonInput } from '@trtllm/langchain';
import { TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const quiet = { warn: () => undefined };

/** The error of `fn`, which must be a TritonLlmError with code invalid_argument naming `field` and `value`. */
function expectInvalid(fn: () => unknown, field: string, value: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(TritonLlmError);
  expect((caught as TritonLlmError).code).toBe('invalid_argument');
  expect((caught as TritonLlmError).message).toContain(field);
  expect((caught as TritonLlmError).message).toContain(value);
}

describe('ChatTriton refuses bad input before anything is sent', () => {
  let fake: FakeTriton;
  let model: ChatTriton;
  beforeAll(async () => {
    fake = await startFakeTriton();
    model = new ChatTriton({ grpcUrl: fake.grpcUrl, model: 'tensorrt_llm_bls', logger: quiet });
  });
  afterAll(async () => {
    await model.close();
    await fake.close();
  });

  const base = (): ChatTritonInput => ({ grpcUrl: fake.grpcUrl, logger: quiet });

  it.each([
    ['temperature', { temperature: -1 }, '-1'],
    ['topP', { topP: 2 }, '2'],
    ['maxTokens', { maxTokens: 0 }, '0'],
    ['beamWidth', { beamWidth: 0.5 }, '0.5'],
    ['endId', { endId: 2 ** 40 }, String(2 ** 40)],
    ['stopWords', { stopWords: 'halt' }, '"halt"'],
    ['stop', { stop: [''] }, '[""]'],
    ['model', { model: '' }, '""'],
    ['chatTemplate', { chatTemplate: 'vicuna' }, '"vicuna"'],
    ['tokenizerDir', { tokenizerDir: 42 }, '42'],
  ])('constructor: %s', (field, bad, shown) => {
    expectInvalid(() => new ChatTriton({ ...base(), ...bad } as unknown as ChatTritonInput), field, shown);
  });

  it.each([
    ['grpcUrl', {}, 'exactly one'],
    ['grpcUrl, httpUrl', { httpUrl: 'http://localhost:8000' }, 'exactly one'],
    ['grpcUrl', { grpcUrl: 'localhost:8001' }, '"localhost:8001"'],
    ['httpUrl', { grpcUrl: undefined, httpUrl: 'ftp://x' }, '"ftp://x"'],
    ['transport', { grpcUrl: undefined, transport: {} }, '{}'],
  ])('connection: %s', (field, change, shown) => {
    const fields = { ...(field === 'grpcUrl' && Object.keys(change).length === 0 ? {} : base()), ...change };
    expectInvalid(
      () => new ChatTriton({ logger: quiet, ...fields } as unknown as ChatTritonInput),
      field,
      shown,
    );
  });

  it('a bad call option is refused and nothing reaches the server', async () => {
    const before = fake.events().length;
    const call = model.invoke('What is ML?', { topP: 1.5 });
    await expect(call).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('topP'),
    });
    await expect(model.invoke('What is ML?', { seed: -3 })).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('seed'),
    });
    expect(fake.events().length).toBe(before);
  });

  it('content other than text and images is refused by name', async () => {
    const audio = new HumanMessage({
      content: [{ type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' }],
    });
    await expect(model.invoke([audio])).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('messages[0].content[0]'),
    });
  });

  it('an option the deployed model lacks is refused naming it (llmapi has no beams)', async () => {
    const llmapi = new ChatTriton({ grpcUrl: fake.grpcUrl, model: 'llmapi', logger: quiet });
    try {
      await expect(llmapi.invoke('What is ML?', { beamWidth: 2 })).rejects.toMatchObject({
        code: 'invalid_argument',
        field: 'beamWidth',
        message: expect.stringContaining('beamWidth'),
      });
    } finally {
      await llmapi.close();
    }
  });

  it('bad settings are typed errors whose field names them', async () => {
    await expect(model.invoke('What is ML?', { stopWords: ['ok', ''] })).rejects.toMatchObject({
      code: 'invalid_argument',
      field: 'stopWords[1]',
    });
    expect(() => new ChatTriton({ ...base(), lora: { taskId: -1 } })).toThrow(
      expect.objectContaining({ code: 'invalid_argument', field: 'lora.taskId' }),
    );
  });

  it('every option of the SDK descriptor is a setting: a BLS-only one reaches the BLS model', async () => {
    const reply = await model.invoke(`Hi ${fakeScript('sent')}`, { numDraftTokens: 2, maxTokens: 10 });
    expect(reply.content).toBe('sent');
    const ensemble = new ChatTriton({ ...base(), model: 'ensemble', numDraftTokens: 2 });
    const before = fake.events().length;
    try {
      await expect(ensemble.invoke('What is ML?')).rejects.toMatchObject({
        code: 'invalid_argument',
        field: 'numDraftTokens',
        model: 'ensemble',
      });
    } finally {
      await ensemble.close();
    }
    expect(fake.events().length).toBe(before);
  });
});
