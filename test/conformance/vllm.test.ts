import { createTensor, type InferResponse, TritonLlm, TritonLlmError, tensorStrings } from '@trtllm/sdk';
import { encode } from '@trtllm/testing';
import { expect, it } from 'vitest';
import { abortedAfter, expectedVllm, generateTopTwoLogProbs, vllmText } from '../support/vllm.js';
import { describeEachServer, streamed, useServer } from './servers.js';

// Triton's vLLM backend: the fake's `vllm` model and the real Triton's stand-in
// (test/triton/fakegen/vllm_model.py), both on GENERATOR.md's generator.
const MODEL = 'vllm';
const PROMPT = 'What is ML?';

describeEachServer("Triton's vLLM backend on the %s Triton over %s", (kind, protocol) => {
  const server = useServer(kind);
  const llm = () => new TritonLlm({ transport: server().transport(protocol), model: MODEL });
  const id = (tag: string) => `vllm-${tag}-${kind}-${protocol}-${Math.random().toString(36).slice(2, 8)}`;

  it('is detected as the vllm flavor: decoupled, no batch dimension', async () => {
    const schema = await llm().schema();
    expect([schema.flavor, schema.decoupled, schema.maxBatchSize]).toEqual(['vllm', true, 0]);
  });

  it('streams deltas that add up to the text, with vLLM finish reason and counts', async () => {
    const want = expectedVllm(PROMPT, { maxTokens: 12 });
    const { text, final } = await streamed(llm().stream({ prompt: PROMPT, maxTokens: 12 }));
    expect(text).toBe(vllmText(want.tokens));
    expect(final.finishReason).toBe('length');
    expect(final.usage).toEqual({ promptTokens: encode(PROMPT).length, completionTokens: 12 });
  });

  it('generates the whole text without the prompt, counted', async () => {
    const want = expectedVllm(PROMPT, { maxTokens: 9, seed: 1 });
    const result = await llm().generate({ prompt: PROMPT, maxTokens: 9, seed: 1 });
    expect(result.text).toBe(vllmText(want.tokens));
    expect(result.finishReason).toBe('length');
    expect(result.usage.completionTokens).toBe(9);
  });

  it('ends at a stop string with finish reason stop, the string trimmed, streamed and not', async () => {
    const whole = vllmText(expectedVllm(PROMPT, { maxTokens: 40 }).tokens);
    const stop = ' field';
    expect(whole).toContain(stop);
    const request = { prompt: PROMPT, maxTokens: 40, stopWords: [stop] };
    const result = await llm().generate(request);
    expect([result.finishReason, result.text]).toEqual(['stop', whole.slice(0, whole.indexOf(stop))]);
    const { text, final } = await streamed(llm().stream(request));
    expect([final.finishReason, text]).toEqual(['stop', whole.slice(0, whole.indexOf(stop))]);
  });

  it('returns log probs with the top-2 alternatives of every token', async () => {
    await generateTopTwoLogProbs(llm(), PROMPT, 6);
  });

  it('an abort of a stream cancels the request on the server, and the report says so', async () => {
    const controller = new AbortController();
    const requestId = id('abort');
    const stream = llm().stream(
      { prompt: PROMPT, maxTokens: 2000, requestId },
      { signal: controller.signal },
    );
    const { finishReason, report } = await abortedAfter(stream, controller, 3);
    expect(finishReason).toBe('cancelled');
    expect(report).toMatchObject({
      serverStopsGenerating: true,
      via: [protocol === 'grpc' ? 'grpc_cancel' : 'http_disconnect'],
    });
    const end = await server().waitForEvent((e) => e.id === requestId && e.event !== 'received');
    expect([end.event, end.tokens < 2000]).toEqual(['cancelled', true]);
  });

  it('refuses an option the backend cannot honour before anything is sent', async () => {
    const requestId = id('refused');
    const err = await llm()
      .generate({ prompt: PROMPT, maxTokens: 4, beamWidth: 2, requestId })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).field).toBe('beamWidth');
    expect(
      server()
        .events()
        .filter((e) => e.id === requestId),
    ).toEqual([]);
  });

  // streamInfer: the same model driven by its tensors, as a model of one's own would be.
  const inputs = (maxTokens: number) => [
    createTensor('text_input', 'BYTES', [1], [PROMPT]),
    createTensor('stream', 'BOOL', [1], [true]),
    createTensor('sampling_parameters', 'BYTES', [1], [JSON.stringify({ max_tokens: maxTokens })]),
    createTensor('return_finish_reason', 'BOOL', [1], [true]),
  ];
  const texts = (responses: readonly InferResponse[], name: string) =>
    responses.flatMap((r) => r.outputs.filter((t) => t.name === name).flatMap(tensorStrings));

  it('streamInfer streams the tensors of each response, the last final', async () => {
    const want = expectedVllm(PROMPT, { maxTokens: 8 });
    const responses: InferResponse[] = [];
    for await (const r of llm().streamInfer({ model: MODEL, inputs: inputs(8) })) responses.push(r);
    expect(texts(responses, 'text_output').join('')).toBe(vllmText(want.tokens));
    expect(texts(responses, 'finish_reason').at(-1)).toBe('length');
    expect(responses.filter((r) => r.final)).toEqual([responses.at(-1)]);
  });

  it("streamInfer's signal cancels the request on the server", async () => {
    const controller = new AbortController();
    const requestId = id('stream-infer-abort');
    let seen = 0;
    const err = await (async () => {
      for await (const _ of llm().streamInfer(
        { model: MODEL, id: requestId, inputs: inputs(2000) },
        { signal: controller.signal },
      )) {
        seen += 1;
        if (seen === 3) controller.abort();
      }
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'cancelled' });
    const end = await server().waitForEvent((e) => e.id === requestId && e.event !== 'received');
    expect([end.event, end.tokens < 2000]).toEqual(['cancelled', true]);
  });
});
