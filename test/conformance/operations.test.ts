import { status as grpcStatus } from '@grpc/grpc-js';
import { type StreamChunk, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { expect, it } from 'vitest';
import { repositoryControl } from './own-triton.js';
import { describeEachServer, useServer } from './servers.js';

const PROMPT = 'What is ML?';
// Its 60-token reply (from the corpus's Chinese sentence, GENERATOR.md) holds Chinese and an emoji and ends on a
// whole character.
const PROMPT_CJK = 'Hello world.';
const expected = (prompt: string, maxTokens: number, extra: object = {}): string =>
  fakeTokenizer.decode(generateTokens(fakeTokenizer.encode(prompt), { maxTokens, ...extra })[0]!.tokens);

async function text(stream: AsyncIterable<StreamChunk>): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += chunk.text;
  return out;
}

describeEachServer('conformance: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  const llm = (model: string, tokenizer = false) =>
    new TritonLlm({
      transport: server().transport(protocol),
      model,
      ...(tokenizer ? { tokenizer: fakeTokenizer } : {}),
    });

  it('answers health, readiness and server metadata', async () => {
    const c = llm('ensemble');
    expect(await c.health()).toBe(true);
    expect(await c.ready()).toBe(true);
    expect(await c.modelReady()).toBe(true);
    expect((await c.serverMetadata()).name).toBe('triton');
  });

  it('answers readiness over HTTP as Triton does: 200 with no body, or 400 with its error JSON, both as text/plain', async () => {
    // The same exchange whichever protocol the block is for: it is HTTP's own.
    const answer = async (path: string) => {
      const r = await fetch(`${server().httpUrl}${path}`);
      return { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
    };
    const ready = { status: 200, type: 'text/plain', body: '' };
    const notReady = { status: 400, type: 'text/plain', body: '{"error":"Model version not ready"}' };
    expect(await answer('/v2/health/live')).toEqual(ready);
    expect(await answer('/v2/health/ready')).toEqual(ready);
    expect(await answer('/v2/models/ensemble/ready')).toEqual(ready);
    expect(await answer('/v2/models/ensemble/versions/1/ready')).toEqual(ready);
    expect(await answer('/v2/models/nope/ready')).toEqual(notReady);
    expect(await answer('/v2/models/ensemble/versions/7/ready')).toEqual(notReady);
  });

  it('reports each model flavor from its config and metadata', async () => {
    const schemas = await Promise.all(
      ['ensemble', 'tensorrt_llm_bls', 'tensorrt_llm', 'tensorrt_llm_unary', 'llmapi'].map((m) =>
        llm(m).schema(),
      ),
    );
    expect(schemas.map((s) => [s.flavor, s.decoupled, s.maxBatchSize])).toEqual([
      ['ensemble', true, 64],
      ['bls', true, 64],
      ['tensorrt_llm', true, 64],
      ['tensorrt_llm', false, 64],
      ['llmapi', true, 64],
    ]);
    const metadata = await llm('tensorrt_llm').modelMetadata();
    expect(metadata.inputs.find((i) => i.name === 'input_ids')).toMatchObject({
      datatype: 'INT32',
      shape: [-1, -1],
    });
  });

  // Cut by maxTokens inside a character: its remnant is dropped, as OpenAI and vLLM do.
  const cut = (text: string): string => text.replace(/\uFFFD$/u, '');

  it('generates ensemble text', async () => {
    const result = await llm('ensemble').generate({ prompt: PROMPT, maxTokens: 20 });
    expect(result.text).toBe(cut(expected(PROMPT, 20)));
    expect(result.finishReason).toBe('length');
  });

  it('generates through a non-decoupled ensemble and raw model', async () => {
    const a = await llm('ensemble_unary').generate({ prompt: PROMPT, maxTokens: 20 });
    expect(a.text).toBe(cut(expected(PROMPT, 20)));
    const b = await llm('tensorrt_llm_unary').generate({ inputIds: [259, 260], maxTokens: 10 });
    expect(b.sequences[0]?.tokenIds).toEqual(generateTokens([259, 260], { maxTokens: 10 })[0]?.tokens);
  });

  it('streams correct BLS text (accumulate_tokens) including Chinese and emoji', async () => {
    const out = await text(llm('tensorrt_llm_bls').stream({ prompt: PROMPT_CJK, maxTokens: 60 }));
    expect(out).toBe(expected(PROMPT_CJK, 60));
    expect(out).toMatch(/机器学习.*🤖/u);
    expect(out).not.toContain('\uFFFD');
  });

  it('streams the raw model as text through a tokenizer, byte for byte equal to generate', async () => {
    const c = llm('tensorrt_llm', true);
    const streamed = await text(c.stream({ prompt: PROMPT_CJK, maxTokens: 60 }));
    const whole = await c.generate({ prompt: PROMPT_CJK, maxTokens: 60 });
    expect(new TextEncoder().encode(streamed)).toEqual(new TextEncoder().encode(whole.text));
    expect(streamed).toBe(expected(PROMPT_CJK, 60));
    expect(streamed).toMatch(/机器学习.*🤖/u);
    expect(streamed).not.toContain('\uFFFD');
  });

  it('marks ensemble stream chunks that the server broke into U+FFFD', async () => {
    let lossy = 0;
    for await (const chunk of llm('ensemble').stream({ prompt: PROMPT, maxTokens: 70 })) {
      if (!chunk.done && chunk.lossy) lossy++;
    }
    expect(lossy).toBeGreaterThan(0);
  });

  it('honours stop words and bad words on the server', async () => {
    const dataId = fakeTokenizer.encode(' data');
    const learning = fakeTokenizer.encode(' learning');
    if (protocol === 'grpc') {
      const stop = await llm('tensorrt_llm').generate({
        inputIds: [259],
        maxTokens: 300,
        stopWordIds: [dataId],
      });
      expect(stop.sequences[0]?.tokenIds).toEqual(
        generateTokens([259], { maxTokens: 300, stopWords: [dataId] })[0]?.tokens,
      );
      expect(stop.finishReason).toBe('stop');
      const bad = await llm('tensorrt_llm').generate({
        inputIds: [259],
        maxTokens: 40,
        badWordIds: [learning],
      });
      expect(bad.sequences[0]?.tokenIds).not.toContain(learning[0]);
    } else {
      // The generate extension has no way to send the raw model's [1, 2, N] word lists: a clear refusal, nothing sent.
      const before = server().events().length;
      const err = await llm('tensorrt_llm')
        .generate({ inputIds: [259], maxTokens: 300, stopWordIds: [dataId] })
        .catch((e: unknown) => e);
      expect((err as TritonLlmError).code).toBe('unimplemented');
      expect((err as TritonLlmError).message).toContain('stop_words_list');
      expect(server().events().length).toBe(before);
    }
    const ens = await llm('ensemble').generate({ prompt: PROMPT, maxTokens: 300, stopWords: [' data'] });
    expect(ens.text).toBe(expected(PROMPT, 300).split(' data')[0]);
    const banned = await llm('ensemble').generate({ prompt: PROMPT, maxTokens: 40, badWords: [' learning'] });
    expect(banned.text).not.toContain(' learning');
  });

  it('returns distinct beams and returned sequences', async () => {
    const c = llm('tensorrt_llm_unary');
    const beams = await c.generate({ inputIds: [259], maxTokens: 6, beamWidth: 2 });
    expect(beams.sequences.map((s) => s.tokenIds)).toEqual(
      generateTokens([259], { maxTokens: 6, beamWidth: 2 }).map((s) => s.tokens),
    );
    const n = await llm('tensorrt_llm').generate({ inputIds: [259], maxTokens: 6, numReturnSequences: 3 });
    expect(n.sequences.map((s) => s.tokenIds)).toEqual(
      generateTokens([259], { maxTokens: 6, numReturnSequences: 3 }).map((s) => s.tokens),
    );
  });

  it('returns log probs', async () => {
    const r = await llm('tensorrt_llm').generate({ inputIds: [259], maxTokens: 5, returnLogProbs: true });
    expect(r.sequences[0]?.logProbs).toEqual(
      generateTokens([259], { maxTokens: 5, returnLogProbs: true })[0]?.logProbs,
    );
  });

  it('keeps batch results in order', async () => {
    const prompts = ['Hello world', PROMPT, 'Machine learning'];
    const results = await llm('ensemble').generateBatch(prompts.map((prompt) => ({ prompt, maxTokens: 4 })));
    expect(results.map((r) => r.text)).toEqual(prompts.map((p) => expected(p, 4)));
  });

  it('sends several prompts to a non-decoupled model as one batched request', async () => {
    const requests = [
      { prompt: 'Hello world', maxTokens: 6 },
      { prompt: PROMPT, maxTokens: 2 },
      { prompt: 'Machine learning is fun', maxTokens: 9 },
    ];
    const results = await llm('ensemble_unary').generateBatch(requests);
    expect(results.map((r) => r.text)).toEqual(requests.map((r) => expected(r.prompt, r.maxTokens)));
    const id = results[0]!.requestId;
    expect(results.every((r) => r.requestId === id)).toBe(true);
    const raw = await llm('tensorrt_llm_unary').generateBatch([
      { inputIds: [259, 260, 261, 262], maxTokens: 3 },
      { inputIds: [42], maxTokens: 7 },
    ]);
    expect(raw.map((r) => r.sequences[0]!.tokenIds)).toEqual([
      generateTokens([259, 260, 261, 262], { maxTokens: 3 })[0]!.tokens,
      generateTokens([42], { maxTokens: 7 })[0]!.tokens,
    ]);
    const seen = server()
      .events()
      .filter((e) => e.model === 'tensorrt_llm_unary' && (e.id === id || e.id === raw[0]!.requestId));
    const generated = (prompts: number[][], limits: number[]): number =>
      prompts.reduce((n, ids, i) => n + generateTokens(ids, { maxTokens: limits[i]! })[0]!.tokens.length, 0);
    expect(seen.map((e) => [e.id, e.event, e.tokens])).toEqual([
      [id, 'received', 0],
      [
        id,
        'completed',
        generated(
          requests.map((r) => fakeTokenizer.encode(r.prompt)),
          [6, 2, 9],
        ),
      ],
      [raw[0]!.requestId, 'received', 0],
      [raw[0]!.requestId, 'completed', generated([[259, 260, 261, 262], [42]], [3, 7])],
    ]);
  });

  it('demultiplexes the beams of every item of a batched request', async () => {
    const requests = [
      { inputIds: [259, 260], maxTokens: 5, beamWidth: 2 },
      { inputIds: [42], maxTokens: 3, beamWidth: 2 },
    ];
    const results = await llm('tensorrt_llm_unary').generateBatch(requests);
    expect(results.map((r) => r.sequences.map((q) => q.tokenIds))).toEqual(
      requests.map((r) => generateTokens(r.inputIds, r).map((q) => q.tokens)),
    );
    expect(results[1]!.requestId).toBe(results[0]!.requestId);
  });

  it('says an unknown model is not there', async () => {
    const err = await llm('nope')
      .generate({ prompt: 'hi', maxTokens: 2 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).message).toContain('nope');
  });

  it('answers a wrong method with 405 and an unknown path with 404 over HTTP, each typed as Triton types it', async () => {
    const answer = async (method: string, path: string) => {
      const r = await fetch(`${server().httpUrl}${path}`, { method });
      return `${r.status} ${r.headers.get('content-type')} ${await r.text()}`;
    };
    const notAllowed = '{"error":"Method Not Allowed"}';
    expect(await answer('GET', '/v2/models/ensemble/infer')).toBe(`405 text/plain ${notAllowed}`);
    expect(await answer('POST', '/v2/models/ensemble/ready')).toBe(`405 text/plain ${notAllowed}`);
    expect(await answer('POST', '/v2/health/ready')).toBe(`405 text/plain ${notAllowed}`);
    expect(await answer('GET', '/v2/models/ensemble/generate')).toBe(`405 application/json ${notAllowed}`);
    expect(await answer('POST', '/v2/models/ensemble/config')).toBe(`405 application/json ${notAllowed}`);
    expect(await answer('GET', '/v2/repository/index')).toBe(`405 application/json ${notAllowed}`);
    expect(await answer('GET', '/v2/repository/models/ensemble/load')).toBe(
      `405 application/json ${notAllowed}`,
    );
    expect(await answer('GET', '/v2/nothing')).toBe('404 text/plain {"error":"Not Found"}');
  });

  it('says the statistics of a misspelt model are not found, naming the closest (Triton answers invalid argument)', async () => {
    const err = await llm('ensembel')
      .statistics()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    const e = err as TritonLlmError;
    expect(e.code).toBe('not_found');
    expect(e.serverMessage).toBe("requested model 'ensembel' is not available");
    expect(e.message).toContain("did you mean 'ensemble'?");
  });

  it('refuses a model load or unload as Triton does without explicit model control (HTTP 503, gRPC UNAVAILABLE)', async () => {
    const message = 'explicit model load / unload is not allowed if polling is enabled';
    for (const action of ['load', 'unload'] as const) {
      if (protocol === 'http') {
        const r = await fetch(`${server().httpUrl}/v2/repository/models/ensemble/${action}`, {
          method: 'POST',
        });
        expect(r.status, action).toBe(503);
        expect(await r.json(), action).toEqual({ error: message });
      } else {
        const err = await repositoryControl(server().grpcUrl, action, 'ensemble');
        expect(err?.code, action).toBe(grpcStatus.UNAVAILABLE);
        expect(err?.details, action).toBe(message);
      }
    }
    // The model is still served.
    expect(await llm('ensemble').modelReady()).toBe(true);
  });

  it('refuses bad input before sending', async () => {
    const before = server().events().length;
    const err = await llm('ensemble')
      .generate({ prompt: '', maxTokens: 4 })
      .catch((e: unknown) => e);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expect(server().events().length).toBe(before);
  });

  it('refuses to stream a model that is not decoupled', async () => {
    const err = await text(llm('ensemble_unary').stream({ prompt: PROMPT, maxTokens: 2 })).catch(
      (e: unknown) => e,
    );
    expect((err as TritonLlmError).code).toBe('failed_precondition');
  });

  it('reports the LLM-API finish reason', async () => {
    const r = await llm('llmapi').generate({ prompt: PROMPT, maxTokens: 9 });
    expect(r.finishReason).toBe('length');
    expect(r.text).toBe(expected(PROMPT, 9));
  });
});
