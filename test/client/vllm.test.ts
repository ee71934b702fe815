import { createHash } from 'node:crypto';
import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { encode, tokenLogProb } from '@trtllm/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';
import { abortedAfter, expectedVllm, generateTopTwoLogProbs, vllmText } from '../support/vllm.js';

const PROMPT = 'What is ML?';

describe.each(PROTOCOLS)("Triton's vLLM backend (the fake's vllm model) over %s", (protocol) => {
  const fake = useFakeTriton({ itlMs: 2 });
  beforeEach(() => fake.triton().clearEvents());
  const llm = () => new TritonLlm({ transport: fake.transport(protocol), model: 'vllm' });

  it('is detected as the vllm flavor, decoupled, with no batch dimension', async () => {
    const schema = await llm().schema();
    expect([schema.flavor, schema.decoupled, schema.maxBatchSize]).toEqual(['vllm', true, 0]);
  });

  it('streams text deltas that add up to the generated text, with counts from num_*_tokens', async () => {
    const want = expectedVllm(PROMPT, { maxTokens: 12 });
    const deltas: string[] = [];
    let final:
      | { finishReason: string; usage: { promptTokens?: number; completionTokens?: number } }
      | undefined;
    for await (const chunk of llm().stream({ prompt: PROMPT, maxTokens: 12 })) {
      if (chunk.done) final = chunk;
      else deltas.push(chunk.text);
    }
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(vllmText(want.tokens));
    expect(final?.finishReason).toBe('length');
    expect(final?.usage).toEqual({ promptTokens: encode(PROMPT).length, completionTokens: 12 });
  });

  it('generates the whole text in one response, the prompt left out', async () => {
    const want = expectedVllm(PROMPT, { maxTokens: 9, seed: 1 });
    const result = await llm().generate({ prompt: PROMPT, maxTokens: 9, seed: 1 });
    expect(result.text).toBe(vllmText(want.tokens));
    expect(result.usage.completionTokens).toBe(9);
    expect(result.sequences[0]?.tokenCount).toBe(9);
  });

  it('ends at a stop string with finish reason stop and the string trimmed', async () => {
    const whole = vllmText(expectedVllm(PROMPT, { maxTokens: 40 }).tokens);
    const stop = ' field';
    expect(whole).toContain(stop);
    const result = await llm().generate({ prompt: PROMPT, maxTokens: 40, stopWords: [stop] });
    expect(result.finishReason).toBe('stop');
    expect(result.text).toBe(whole.slice(0, whole.indexOf(stop)));
  });

  it('returns log probs with the top alternatives from the logprobs JSON', async () => {
    const { seq, tokens } = await generateTopTwoLogProbs(llm(), PROMPT, 6);
    const sum = tokens.map(tokenLogProb).reduce((a, b) => a + b, 0);
    expect(seq.cumLogProb).toBeCloseTo(sum, 5);
  });

  it('an abort cancels the request on the server, and the report says so', async () => {
    const controller = new AbortController();
    const stream = llm().stream({ prompt: PROMPT, maxTokens: 5000 }, { signal: controller.signal });
    const { finishReason, report } = await abortedAfter(stream, controller, 3);
    expect(finishReason).toBe('cancelled');
    expect(report).toMatchObject({
      serverStopsGenerating: true,
      via: [protocol === 'grpc' ? 'grpc_cancel' : 'http_disconnect'],
    });
    const seen = await fake
      .triton()
      .waitForEvent((e) => e.id === stream.requestId && e.model === 'vllm' && e.event === 'cancelled', 5000);
    expect(seen.tokens).toBeLessThan(5000);
  });

  it('stop() has no in-band stop to send: the call is cancelled, finish stopped, and vLLM aborts the request', async () => {
    const stream = llm().stream({ prompt: PROMPT, maxTokens: 5000 });
    let final: { finishReason: string; result: { earlyStop?: { via: readonly string[] } } } | undefined;
    for await (const chunk of stream) {
      if (chunk.done) final = chunk;
      else if (chunk.totalTokens >= 2) await stream.stop();
    }
    expect(final?.finishReason).toBe('stopped');
    expect(final?.result.earlyStop?.via).toEqual([protocol === 'grpc' ? 'grpc_cancel' : 'http_disconnect']);
    const seen = await fake
      .triton()
      .waitForEvent((e) => e.id === stream.requestId && e.event === 'cancelled', 5000);
    expect(seen.tokens).toBeLessThan(5000);
  });

  it('an aborted generate() stops vLLM over gRPC; over HTTP the report and the warning say it runs on', async () => {
    const warnings: string[] = [];
    const client = new TritonLlm({
      transport: fake.transport(protocol),
      model: 'vllm',
      logger: { warn: (m) => warnings.push(m) },
    });
    const controller = new AbortController();
    const pending = client.generate(
      { prompt: PROMPT, maxTokens: 100, requestId: `abort-${protocol}` },
      { signal: controller.signal },
    );
    await fake.triton().waitForEvent((e) => e.id === `abort-${protocol}` && e.event === 'received', 5000);
    controller.abort();
    const result = await pending;
    expect(result.finishReason).toBe('cancelled');
    expect(result.earlyStop?.serverStopsGenerating).toBe(protocol === 'grpc');
    if (protocol === 'grpc') expect(warnings).toEqual([]);
    else expect(warnings).toEqual([expect.stringContaining('Use stream() or the gRPC transport')]);
    // The fake, like Triton, sees a closed HTTP connection only at its next write: the request's last.
    const end = await fake
      .triton()
      .waitForEvent((e) => e.id === `abort-${protocol}` && e.event !== 'received', 5000);
    expect([end.event, end.tokens < 100]).toEqual(
      protocol === 'grpc' ? ['cancelled', true] : ['completed', false],
    );
  });

  it('sends images as base64 bytes in the image input, which the model receives intact', async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 9, 8, 7, 6]);
    const named = (bytes: Uint8Array, i: number) =>
      `#${i + 1} data ${bytes.length} bytes ${createHash('sha256').update(bytes).digest('hex').slice(0, 8)}`;
    const result = await llm().generate({
      prompt: 'Describe these.',
      maxTokens: 200,
      images: [
        { data: png, mediaType: 'image/png' },
        { url: `data:image/jpeg;base64,${Buffer.from(jpeg).toString('base64')}` },
      ],
    });
    expect(result.text).toBe(`2 images: ${[png, jpeg].map(named).join('; ')}.`);
  });

  it('refuses an option the backend cannot honour before anything is sent', async () => {
    const err = await llm()
      .generate({ prompt: PROMPT, maxTokens: 4, beamWidth: 2, requestId: `refused-${protocol}` })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).field).toBe('beamWidth');
    expect(
      fake
        .triton()
        .events()
        .filter((e) => e.id === `refused-${protocol}`),
    ).toEqual([]);
  });
});
