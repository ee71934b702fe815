import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { expect, it } from 'vitest';
import { describeEachServer, streamed, useServer } from './servers.js';

// What users of NVIDIA's official models see (issue 28), on both servers over both transports:
// `tensorrt_llm_bls_official` is shaped like the official BLS (a fresh inner request id, every
// inner response decoded, a flags-only final), and the generator puts its final flag on its last
// response that carries tensors, as the C++ backend does.
const PROMPT = 'What is ML?';
// Its 60-token reply (from the corpus's Chinese sentence, GENERATOR.md) holds Chinese and an emoji and ends on a
// whole character.
const PROMPT_CJK = 'Hello world.';
const MAX = 300;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const expected = (prompt: string, maxTokens: number): string =>
  fakeTokenizer.decode(generateTokens(fakeTokenizer.encode(prompt), { maxTokens })[0]!.tokens);

describeEachServer('official model shapes: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  const llm = (model: string, warnings: string[] = []) =>
    new TritonLlm({
      transport: server().transport(protocol),
      model,
      tokenizer: fakeTokenizer,
      logger: { warn: (m) => warnings.push(m) },
    });

  it('streams exact accumulated text from the official-shaped BLS, which decodes every response', async () => {
    const bls = llm('tensorrt_llm_bls_official');
    const { text, final: result } = await streamed(bls.stream({ prompt: PROMPT_CJK, maxTokens: 60 }));
    expect(text).toBe(expected(PROMPT_CJK, 60));
    expect(text).toContain('机器学习');
    expect(result.finishReason).toBe('length');
    expect((await bls.generate({ prompt: PROMPT_CJK, maxTokens: 60 })).text).toBe(text);
  });

  it('runs the inner request of the official-shaped BLS under an id of its own', async () => {
    const since = Date.now() - 1000;
    const stream = llm('tensorrt_llm_bls_official').stream({ prompt: PROMPT, maxTokens: 5 });
    await streamed(stream);
    const inner = await server().waitForEvent(
      (e) => e.model === 'tensorrt_llm' && e.event === 'completed' && e.ts >= since && UUID.test(e.id),
    );
    expect(inner.id).not.toBe(stream.requestId);
    expect(
      server()
        .events()
        .some((e) => e.model === 'tensorrt_llm' && e.id === stream.requestId),
    ).toBe(false);
  });

  it('gives each server error class one code on both transports', async () => {
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: unknown) => (e instanceof TritonLlmError ? e.code : String(e)),
      );
    expect(await code(llm('nope').generate({ prompt: PROMPT, maxTokens: 2 }))).toBe('not_found');
    // A request the generator refuses, directly, through the ensemble, and through the official
    // BLS (which answers it INTERNAL with the inner text, as the official model does).
    const refused = { prompt: PROMPT, maxTokens: 4, parameters: { fake_script: 5 } } as const;
    for (const model of ['tensorrt_llm', 'ensemble', 'tensorrt_llm_bls_official']) {
      expect([model, await code(streamed(llm(model).stream(refused)))]).toEqual([model, 'invalid_argument']);
    }
  });

  it('reports token counts that are true or absent on every flavor, streamed and not', async () => {
    const inner: Record<string, string> = {
      ensemble_unary: 'tensorrt_llm_unary',
      tensorrt_llm_unary: 'tensorrt_llm_unary',
      llmapi: 'llmapi',
    };
    const models = ['tensorrt_llm', 'tensorrt_llm_unary', 'ensemble', 'ensemble_unary', 'tensorrt_llm_bls'];
    const counted: string[] = [];
    for (const model of [...models, 'tensorrt_llm_bls_per_token', 'llmapi']) {
      for (const stream of [false, true]) {
        if (stream && model.endsWith('_unary')) continue;
        const c = llm(model);
        const request = { prompt: PROMPT, maxTokens: 7 };
        const result = stream ? (await streamed(c.stream(request))).final : await c.generate(request);
        const generated = await server().waitForEvent(
          (e) =>
            e.id === result.requestId &&
            e.model === (inner[model] ?? 'tensorrt_llm') &&
            e.event === 'completed',
        );
        if (result.usage.completionTokens !== undefined) {
          expect([model, stream, result.usage.completionTokens]).toEqual([model, stream, generated.tokens]);
          counted.push(`${model}${stream ? ' streamed' : ''}`);
        }
      }
    }
    // The models that can tell do: ids, `num_output_tokens`, or one streamed response per token.
    expect(counted).toEqual(
      expect.arrayContaining(['tensorrt_llm', 'tensorrt_llm streamed', 'ensemble streamed']),
    );
    expect(counted.filter((m) => m.startsWith('llmapi'))).toEqual([]);
  });

  it('lets the ensemble end a stream at the stop word it enforces itself: no cancel, no warning', async () => {
    const warnings: string[] = [];
    const stream = llm('ensemble', warnings).stream({ prompt: PROMPT, maxTokens: MAX, stopWords: [' data'] });
    const { final: result } = await streamed(stream);
    expect(result.finishReason).toBe('stop');
    expect(result.earlyStop).toBeUndefined();
    expect(warnings).toEqual([]);
    const inner = await server().waitForEvent(
      (e) => e.model === 'tensorrt_llm' && e.id === stream.requestId && e.event !== 'received',
    );
    expect(inner.event).toBe('completed');
    expect(inner.tokens).toBeLessThan(MAX);
  });
});
