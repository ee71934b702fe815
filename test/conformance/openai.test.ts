import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { expect, it } from 'vitest';
import { chatStreamed, useOpenAiFrontEnd } from './front-ends.js';
import { describeEachServer, useServer } from './servers.js';

const expected = (prompt: string, maxTokens: number): string =>
  fakeTokenizer.decode(generateTokens(fakeTokenizer.encode(prompt), { maxTokens })[0]!.tokens);

// The OpenAI-compatible server in front of each Triton, driven by the official openai client().
describeEachServer('OpenAI-compatible server: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  const client = useOpenAiFrontEnd(server, protocol, 'tensorrt_llm_bls');

  it('completes a prompt', async () => {
    const r = await client().completions.create({
      model: 'tensorrt_llm_bls',
      prompt: 'Hello world',
      max_tokens: 20,
    });
    expect(r.choices[0]?.text).toBe(expected('Hello world', 20));
    expect(r.choices[0]?.finish_reason).toBe('length');
  });

  it('streams a chat completion to [DONE], equal to the whole answer', async () => {
    const request = {
      model: 'tensorrt_llm_bls',
      messages: [{ role: 'user' as const, content: 'What is ML?' }],
      max_tokens: 30,
    };
    const whole = await client().chat.completions.create(request);
    const stream = await client().chat.completions.create({ ...request, stream: true });
    const { text, finish } = await chatStreamed(stream);
    expect(text.length).toBeGreaterThan(0);
    expect(text).toBe(whole.choices[0]?.message.content);
    expect(finish).toBe('length');
  });
});
