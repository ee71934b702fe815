import { type EarlyStopReport, type GenerateRequest, TritonLlm } from '@trtllm/sdk';
import { fakeTokenizer } from '@trtllm/testing';
import { expect, it } from 'vitest';
import { describeEachServer, useServer } from './servers.js';

// Each row of the README's early-stop table, asserted on both servers over both transports.
const MAX = 400;
const ROWS: readonly { model: string; request: GenerateRequest; serverStops: boolean }[] = [
  { model: 'tensorrt_llm', request: { inputIds: [259, 260], maxTokens: MAX }, serverStops: true },
  { model: 'llmapi', request: { prompt: 'What is ML?', maxTokens: MAX }, serverStops: true },
  { model: 'ensemble', request: { prompt: 'What is ML?', maxTokens: MAX }, serverStops: false },
  { model: 'tensorrt_llm_bls', request: { prompt: 'What is ML?', maxTokens: MAX }, serverStops: false },
];

describeEachServer('early stop: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);

  async function run(
    model: string,
    request: GenerateRequest,
    end: 'abort' | 'stop',
  ): Promise<{ id: string; report: EarlyStopReport | undefined; finish: string; tokens: number }> {
    const llm = new TritonLlm({
      transport: server().transport(protocol),
      model,
      tokenizer: fakeTokenizer,
      logger: { warn: () => undefined },
    });
    const controller = new AbortController();
    const stream = llm.stream(request, { signal: controller.signal });
    let tokens = 0;
    let report: EarlyStopReport | undefined;
    let finish = '';
    for await (const chunk of stream) {
      if (chunk.done) {
        report = chunk.result.earlyStop;
        finish = chunk.finishReason;
      } else if (++tokens === 3) {
        if (end === 'abort') controller.abort();
        else void stream.stop();
      }
    }
    return { id: stream.requestId, report, finish, tokens };
  }

  for (const row of ROWS) {
    it(`abort on ${row.model}: server ${row.serverStops ? 'stops' : 'keeps generating'}`, async () => {
      const { id, report, finish } = await run(row.model, row.request, 'abort');
      expect(finish).toBe('cancelled');
      expect(report?.serverTold).toBe(true);
      expect(report?.serverStopsGenerating).toBe(row.serverStops);
      const inner = await server().waitForEvent(
        (e) =>
          e.id === id &&
          e.model === (row.model === 'llmapi' ? 'llmapi' : 'tensorrt_llm') &&
          e.event !== 'received',
        20_000,
      );
      if (row.serverStops) {
        expect(['cancelled', 'stopped']).toContain(inner.event);
        expect(inner.tokens).toBeLessThan(MAX);
      } else {
        expect(inner.event).toBe('completed');
        expect(inner.tokens).toBe(MAX);
      }
    });
  }

  it('stop() on the raw model is an in-band stop that ends it gracefully', async () => {
    const { id, report, finish } = await run('tensorrt_llm', { inputIds: [261], maxTokens: MAX }, 'stop');
    expect(finish).toBe('stopped');
    expect(report?.via).toEqual(['in_band_stop']);
    const seen = await server().waitForEvent((e) => e.id === id && e.event === 'stopped', 10_000);
    expect(seen.tokens).toBeLessThan(MAX);
  });

  it('a client stop sequence stops the raw model in-band and the ensemble only on the client', async () => {
    const stopAt = 'artificial';
    const raw = new TritonLlm({
      transport: server().transport(protocol),
      model: 'tensorrt_llm',
      tokenizer: fakeTokenizer,
    });
    const r = await raw.generate({ prompt: 'Hello world', maxTokens: MAX, stopWords: [stopAt] });
    expect(r.finishReason).toBe('stop');
    expect(r.text).not.toContain(stopAt);
    // Over gRPC the ids can carry the words; over HTTP they cannot, so only the client matches: same result.
    if (r.earlyStop !== undefined) {
      expect(r.earlyStop.trigger).toBe('stop_sequence');
      expect(r.earlyStop.serverStopsGenerating).toBe(true);
    }
    const ensemble = new TritonLlm({
      transport: server().transport(protocol),
      model: 'ensemble',
      logger: { warn: () => undefined },
    });
    // "rtificial" never matches the server's id-level stop words: only the client sees it.
    const e = await ensemble.generate({ prompt: 'Hello world', maxTokens: MAX, stopWords: ['rtificial'] });
    expect(e.finishReason).toBe('stop');
    expect(e.text.endsWith(' a')).toBe(true);
  });
});
