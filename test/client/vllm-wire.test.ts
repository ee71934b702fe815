import { createTensor, type InferResponse, TritonLlm, TritonLlmError, tensorStrings } from '@trtllm/sdk';
import { encode, fakeTokenizer, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

// The fake's `vllm` model driven by its tensors, as Python tritonclient drives Triton's vLLM backend
// (its samples/client.py): what the backend itself sends, before the SDK's vllm flavor reads it.
const PROMPT = 'What is ML?';

function outputs(r: InferResponse): Record<string, string[]> {
  return Object.fromEntries(r.outputs.map((t) => [t.name, tensorStrings(t)]));
}

describe.each(PROTOCOLS)("the fake's vllm model on the wire over %s", (protocol) => {
  const fake = useFakeTriton({ itlMs: 1 });
  const llm = () => new TritonLlm({ transport: fake.transport(protocol), model: 'vllm' });

  async function run(sampling: object, extra: { stream?: boolean; id: string }): Promise<InferResponse[]> {
    const inputs = [
      createTensor('text_input', 'BYTES', [1], [PROMPT]),
      createTensor('sampling_parameters', 'BYTES', [1], [JSON.stringify(sampling)]),
      createTensor('stream', 'BOOL', [1], [extra.stream ?? false]),
      createTensor('return_finish_reason', 'BOOL', [1], [true]),
      createTensor('return_num_output_tokens', 'BOOL', [1], [true]),
    ];
    const responses: InferResponse[] = [];
    for await (const r of llm().streamInfer({ model: 'vllm', id: extra.id, inputs })) responses.push(r);
    return responses.filter((r) => r.outputs.length > 0);
  }

  it('answers a request that does not stream with the prompt and the whole text, finish reason as vLLM names it', async () => {
    const tokens = generateTokens(encode(PROMPT), { maxTokens: 5 })[0]!.tokens;
    const [only, ...rest] = await run({ max_tokens: 5 }, { id: `whole-${protocol}` });
    expect(rest).toEqual([]);
    // exclude_input_in_output absent: the backend prepends the prompt when it does not stream.
    expect(outputs(only!)).toMatchObject({
      text_output: [PROMPT + fakeTokenizer.decode(tokens).replace(/\uFFFD$/u, '')],
      finish_reason: ['length'],
      num_output_tokens: ['5'],
    });
  });

  it('streams one response per token: "None" until the last, counts of one', async () => {
    const responses = await run({ max_tokens: 4, seed: 2 }, { stream: true, id: `stream-${protocol}` });
    expect(responses.map((r) => outputs(r).finish_reason?.[0])).toEqual(['None', 'None', 'None', 'length']);
    expect(responses.map((r) => outputs(r).num_output_tokens?.[0])).toEqual(['1', '1', '1', '1']);
    const tokens = generateTokens(encode(PROMPT), { maxTokens: 4, seed: 2 })[0]!.tokens;
    expect(responses.map((r) => outputs(r).text_output?.[0]).join('')).toBe(
      fakeTokenizer.decode(tokens).replace(/\uFFFD$/u, ''),
    );
  });

  it('streams n sequences in responses of one sequence each, none saying which', async () => {
    const responses = await run({ max_tokens: 3, n: 2 }, { stream: true, id: `n-${protocol}` });
    expect(responses).toHaveLength(6);
    expect(responses.every((r) => outputs(r).text_output?.length === 1)).toBe(true);
    const [first, second] = generateTokens(encode(PROMPT), { maxTokens: 3, numReturnSequences: 2 });
    const texts = responses.map((r) => outputs(r).text_output?.[0]);
    expect([texts[0], texts[1]]).toEqual(
      [first, second].map((s) => fakeTokenizer.decode(s!.tokens.slice(0, 1))),
    );
  });

  it('refuses a key SamplingParams does not have, with the error the backend sends', async () => {
    const err = await run({ max_tokens: 3, max_token: 5 }, { id: `unknown-${protocol}` }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).serverMessage).toContain("'NoneType' object has no attribute 'lora_name'");
  });
});
