import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type GenerateRequest, type Transport, TritonLlm } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Issue 53: over HTTP, stream() yielded a chunk after its AbortSignal fired in 3 of 40 runs. The
// consumer aborts synchronously inside the loop body at chunk k; whatever the transport still
// delivers (queued chunks of the same response, responses read while the in-band stop travels,
// held-back text flushed at the end), the next iteration may only end the stream.

const TOKENS = 8;
const ROUNDS = 6;

let fakes: FakeTriton[] = [];
const transports: Transport[] = [];

beforeAll(async () => {
  // No time between tokens: responses pile up in the transport's buffers while the consumer runs.
  fakes = await Promise.all([startFakeTriton({ itlMs: 0 }), startFakeTriton({ itlMs: 0 })]);
});

afterAll(async () => {
  await Promise.all(transports.map((t) => t.close()));
  await Promise.all(fakes.map((f) => f.close()));
});

const TRANSPORTS: Record<string, () => Transport> = {
  grpc: () => grpcTransport({ baseUrl: fakes[0]!.grpcUrl }),
  http: () => httpTransport({ baseUrl: fakes[0]!.httpUrl }),
  'grpc replicas': () => grpcTransport({ baseUrls: fakes.map((f) => f.grpcUrl) }),
  'http replicas': () => httpTransport({ baseUrls: fakes.map((f) => f.httpUrl) }),
};

const REQUESTS: Record<string, { model: string; request: GenerateRequest }> = {
  // Over HTTP the raw model's abort sends the in-band stop first: a round trip while responses arrive.
  'the raw model': { model: 'tensorrt_llm', request: { inputIds: [259, 260], maxTokens: TOKENS } },
  ensemble: { model: 'ensemble', request: { prompt: 'Hello world', maxTokens: TOKENS } },
  // Two sequences: one response brings a chunk per sequence, so a second one is queued at the abort.
  'two sequences': {
    model: 'tensorrt_llm',
    request: { inputIds: [261], maxTokens: TOKENS, numReturnSequences: 2 },
  },
};

/** Streams `request`, aborting inside the loop body at chunk `k`; returns what came after the abort. */
async function abortAt(
  llm: TritonLlm,
  request: GenerateRequest,
  k: number,
): Promise<{ reached: boolean; after: string[]; delivered: number; counted: number | undefined }> {
  const controller = new AbortController();
  const after: string[] = [];
  let delivered = 0;
  let counted: number | undefined;
  let index = 0;
  let aborted = false;
  try {
    for await (const chunk of llm.stream(request, { signal: controller.signal })) {
      if (aborted) after.push(chunk.done ? 'final' : `delta ${JSON.stringify(chunk.text)}`);
      if (chunk.done) counted = chunk.usage.completionTokens;
      else delivered += chunk.tokenIds.length;
      if (!chunk.done && index++ === k) {
        controller.abort();
        aborted = true;
      }
    }
  } catch (err) {
    if (!aborted) throw err;
    after.push('error');
  }
  return { reached: aborted, after, delivered, counted };
}

describe.each(Object.keys(TRANSPORTS))('no chunk after an abort over %s', (name) => {
  let transport: Transport;
  beforeAll(() => {
    transport = TRANSPORTS[name]!();
    transports.push(transport);
  });

  it.each(Object.keys(REQUESTS))('%s: aborted at every chunk index, the stream only ends', async (kind) => {
    const { model, request } = REQUESTS[kind]!;
    const llm = new TritonLlm({ transport, model, logger: { warn: () => undefined } });
    const chunks = kind === 'two sequences' ? 2 * TOKENS : TOKENS;
    let reached = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < chunks; k++) {
        const outcome = await abortAt(llm, request, k);
        if (outcome.reached) reached++;
        // At most the final chunk (finish reason and usage), or an end without one.
        expect({ k, after: outcome.after.filter((a) => a.startsWith('delta')) }).toEqual({ k, after: [] });
        // The result counts the tokens the consumer was given, not those that arrived after the abort.
        if (kind === 'the raw model' && outcome.counted !== undefined)
          expect({ k, counted: outcome.counted }).toEqual({ k, counted: outcome.delivered });
      }
    }
    // The aborts happened: the streams were long enough to reach most indexes.
    expect(reached).toBeGreaterThanOrEqual(ROUNDS * (chunks - 2));
  });
});
