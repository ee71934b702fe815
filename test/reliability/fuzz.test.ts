import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import {
  type FinishReason,
  type GenerateRequest,
  type GenerateResult,
  type StreamChunk,
  type Transport,
  TritonLlm,
  TritonLlmError,
} from '@trtllm/sdk';
import { validateRequest } from '@trtllm/sdk/transport';
import { fakeTokenizer } from '@trtllm/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedServer as startScriptedGrpc } from '../../packages/grpc/test/scripted-server.js';
import { startScriptedServer as startScriptedHttp } from '../../packages/http/test/scripted-server.js';
import { useFakeTriton } from '../support/fake.js';
import { streamResponseBytes } from './support/token-flood.js';

// Every property asserts the same thing: whatever goes in, what comes out is a result (a stream:
// its chunks, then one final chunk that holds their text) or a TritonLlmError, never another
// exception, a crash, or a wait without end.
const HANG_MS = 10_000;

/** Runs `work`; returns the TritonLlmError it threw, or undefined. Anything else, or a hang, fails. */
async function onlyTritonLlmErrors(work: () => Promise<unknown>): Promise<TritonLlmError | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no end within ${HANG_MS} ms`)), HANG_MS);
  });
  try {
    await Promise.race([work(), hang]);
    return undefined;
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

const FINISH_REASONS: readonly FinishReason[] = [
  'stop',
  'length',
  'stopped',
  'cancelled',
  'error',
  'unknown',
];

/**
 * Reads a stream to its end and checks its shape: text chunks, then exactly one final chunk, last,
 * whose result holds each sequence's streamed text. A TritonLlmError thrown on the way is
 * passed on to the caller (an allowed outcome); a broken shape fails the property.
 */
async function chunksThenFinal(stream: AsyncIterable<StreamChunk>): Promise<void> {
  const chunks: StreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const final = chunks.at(-1);
  expect(chunks.slice(0, -1).every((c) => !c.done)).toBe(true);
  expect(final?.done).toBe(true);
  if (final?.done !== true) return;
  expect(FINISH_REASONS).toContain(final.finishReason);
  for (const sequence of final.result.sequences) {
    const streamed = chunks.filter((c) => !c.done && c.sequenceIndex === sequence.index).map((c) => c.text);
    expect(streamed.join('')).toBe(sequence.text);
  }
}

/** Checks that a result that came back has a known finish reason and text. */
function aResult(result: GenerateResult): void {
  expect(FINISH_REASONS).toContain(result.finishReason);
  expect(typeof result.text).toBe('string');
}

const anyValue = fc.oneof(
  fc.anything({ withNullPrototype: false }),
  fc.integer(),
  fc.double(),
  fc.bigInt(),
  fc.string(),
  fc.array(fc.integer()),
  fc.array(fc.array(fc.integer(), { maxLength: 3 }), { maxLength: 3 }),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.record(
    { data: fc.array(fc.double()), shape: fc.tuple(fc.integer(), fc.integer()) },
    { noNullPrototype: true },
  ),
  fc.constantFrom(null, undefined, Number.NaN, Number.POSITIVE_INFINITY, -0, '', [], {}),
);

const KEYS = [
  'prompt',
  'inputIds',
  'maxTokens',
  'stopWords',
  'stopWordIds',
  'badWords',
  'badWordIds',
  'endId',
  'topK',
  'topP',
  'temperature',
  'minTokens',
  'seed',
  'beamWidth',
  'numReturnSequences',
  'returnLogProbs',
  'embeddingBias',
  'promptEmbeddingTable',
  'lora',
  'guidedDecoding',
  'draftLogits',
  'requestId',
  'parameters',
] as const;

/**
 * Any object over the request's keys (and unknown ones), each with any value. Objects without a
 * prototype have a test of their own below.
 */
const wildRequest = fc.dictionary(
  fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 12 })),
  anyValue,
  { maxKeys: 8, noNullPrototype: true },
);

/** Mostly `valid`, sometimes `invalid`: most requests pass validation and reach the server. */
function mostly<T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>): fc.Arbitrary<T | U> {
  return fc.oneof({ arbitrary: valid, weight: 30 }, { arbitrary: invalid, weight: 1 });
}

/** Requests near the valid ones, with bounded sizes, so many pass validation and reach the server. */
const nearRequest = fc.record(
  {
    prompt: mostly(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }), fc.constantFrom('', 7)),
    maxTokens: mostly(fc.integer({ min: 1, max: 12 }), fc.constantFrom(0, -1, 1.5, Number.NaN)),
    temperature: mostly(fc.double({ min: 0, max: 3, noNaN: true }), fc.constantFrom(-1, Number.NaN)),
    topP: mostly(fc.double({ min: 0.01, max: 1, noNaN: true }), fc.constantFrom(0, 1.5)),
    topK: mostly(fc.integer({ min: 0, max: 50 }), fc.constant(-1)),
    minTokens: mostly(fc.integer({ min: 0, max: 4 }), fc.constant(-1)),
    seed: mostly(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.constant(-1)),
    stopWords: mostly(
      fc.array(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 3 }),
      fc.constant(['']),
    ),
    badWords: mostly(fc.array(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 3 }), fc.constant([3])),
    beamWidth: mostly(fc.integer({ min: 1, max: 3 }), fc.constant(0)),
    numReturnSequences: mostly(fc.integer({ min: 1, max: 3 }), fc.constant(0)),
    returnLogProbs: fc.boolean(),
    returnNumTokens: fc.boolean(),
    excludeInputInOutput: fc.boolean(),
    endId: mostly(fc.integer({ min: 0, max: 300 }), fc.constant(2 ** 31)),
    repetitionPenalty: mostly(fc.double({ min: 0, max: 3, noNaN: true }), fc.constant(-1)),
    requestId: mostly(fc.nat().map(String), fc.string({ maxLength: 10 })),
  },
  { requiredKeys: ['prompt', 'maxTokens'] },
);

describe('random and malformed requests', () => {
  const fake = useFakeTriton();

  it('validation answers any object with success or invalid_argument naming a field', () => {
    fc.assert(
      fc.property(wildRequest, (request) => {
        try {
          validateRequest(request as unknown as GenerateRequest);
        } catch (err) {
          expect(err).toBeInstanceOf(TritonLlmError);
          expect((err as TritonLlmError).code).toBe('invalid_argument');
          expect((err as TritonLlmError).message).toContain(': ');
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a value that is an object without a prototype with invalid_argument', () => {
    // Plain JavaScript callers can pass one (Object.create(null), some parsers' output).
    const bare = Object.assign(Object.create(null) as object, { data: [] });
    for (const request of [
      { prompt: 'x', maxTokens: bare },
      { prompt: 'x', maxTokens: 1, bogus: bare },
    ]) {
      const err = (() => {
        try {
          validateRequest(request as unknown as GenerateRequest);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(TritonLlmError);
      expect((err as TritonLlmError).code).toBe('invalid_argument');
    }
  });

  it.each(['grpc', 'http'] as const)(
    'requests near the valid ones reach the fake over %s and end in a result or a TritonLlmError',
    async (protocol) => {
      const transport = fake.transport(protocol);
      const clients = ['ensemble', 'tensorrt_llm_bls', 'llmapi', 'tensorrt_llm'].map(
        (model) =>
          new TritonLlm({ transport, model, tokenizer: fakeTokenizer, logger: { warn: () => undefined } }),
      );
      const outcomes = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(
          fc.nat(clients.length - 1),
          nearRequest,
          fc.boolean(),
          async (i, request, stream) => {
            const llm = clients[i]!;
            const err = await onlyTritonLlmErrors(async () =>
              stream
                ? chunksThenFinal(llm.stream(request as GenerateRequest))
                : aResult(await llm.generate(request as GenerateRequest)),
            );
            const key = err?.code ?? 'ok';
            outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
          },
        ),
        { numRuns: 300 },
      );
      console.info(`[fuzz requests ${protocol}]`, Object.fromEntries(outcomes));
      // The property is only worth something if many requests got through validation to the server.
      expect(outcomes.get('ok') ?? 0).toBeGreaterThan(50);
    },
  );
});

describe('random bytes as protobuf answers (gRPC)', () => {
  const fake = useFakeTriton();
  let next: { messages: Uint8Array[]; status: number } = { messages: [], status: 0 };
  let scripted: Awaited<ReturnType<typeof startScriptedGrpc>>;
  const transports: Transport[] = [];

  beforeAll(async () => {
    scripted = await startScriptedGrpc(() => next);
  });
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await scripted.close();
  });

  const valid = streamResponseBytes([300, 301], 0, false);
  /** Random bytes, or a valid response with some bytes changed (protobuf is lenient; flips find more). */
  const body = fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc
      .array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), {
        minLength: 1,
        maxLength: 6,
      })
      .map((flips) => {
        const copy = valid.slice();
        for (const [at, value] of flips) copy[at] = value;
        return copy;
      }),
  );
  const anyAnswer = fc.record({
    messages: fc.array(body, { maxLength: 4 }),
    status: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20 })),
  });
  // Random messages before a well-formed final response and status OK: the answers that can end
  // well, so the stream's shape (chunks, then one final chunk) gets checked on many of them.
  const finalResponse = streamResponseBytes([], 0, true);
  const endedAnswer = fc.record({
    messages: fc
      .array(fc.oneof(fc.constant(valid), body), { maxLength: 3 })
      .map((m) => [...m, finalResponse]),
    status: fc.constant(0),
  });
  const answer = fc.oneof(anyAnswer, endedAnswer);

  function data(): Transport {
    const t = grpcTransport({ baseUrl: scripted.baseUrl });
    transports.push(t);
    return t;
  }

  it('a stream of random messages ends in chunks and one final chunk holding their text, or a TritonLlmError', async () => {
    const meta = fake.transport('grpc');
    const stream = data();
    const transport: Transport = {
      ...meta,
      stream: (r, o) => stream.stream(r, o),
      infer: (r, o) => stream.infer(r, o),
    };
    const llms = ['tensorrt_llm', 'ensemble', 'llmapi', 'tensorrt_llm_unary'].map(
      (model) =>
        new TritonLlm({
          transport,
          model,
          tokenizer: fakeTokenizer,
          retry: { attempts: 1 },
          logger: { warn: () => undefined },
        }),
    );
    await Promise.all(llms.map((l) => l.schema()));
    let ended = 0;
    await fc.assert(
      fc.asyncProperty(answer, fc.nat(llms.length - 1), async (a, i) => {
        next = a;
        const llm = llms[i]!;
        const request = llm.model.startsWith('tensorrt_llm')
          ? { inputIds: [5], maxTokens: 4 }
          : { prompt: 'hi', maxTokens: 4 };
        const err = await onlyTritonLlmErrors(async () =>
          llm.model === 'tensorrt_llm_unary'
            ? aResult(await llm.generate(request))
            : chunksThenFinal(llm.stream(request)),
        );
        if (err === undefined) ended += 1;
      }),
      { numRuns: 300 },
    );
    // The shape checks are only worth something if some answers were read to their end.
    expect(ended).toBeGreaterThan(0);
  });

  // Protobuf decodes many random bytes: a health or statistics answer may be a value.
  it('random bytes as a model config, metadata, health or statistics answer: a TritonLlmError under a non-OK status, else a value or a TritonLlmError', async () => {
    const llm = new TritonLlm({ transport: data(), model: 'ensemble', retry: { attempts: 1 } });
    await fc.assert(
      fc.asyncProperty(anyAnswer, fc.nat(3), async (a, call) => {
        next = a;
        const err = await onlyTritonLlmErrors(() =>
          [() => llm.refreshSchema(), () => llm.modelMetadata(), () => llm.health(), () => llm.statistics()][
            call
          ]!(),
        );
        if (a.status !== 0) expect(err).toBeInstanceOf(TritonLlmError);
      }),
      { numRuns: 200 },
    );
  });
});

describe('random SSE frames (HTTP)', () => {
  const fake = useFakeTriton();
  let next: { status: number; chunks: string[] } = { status: 200, chunks: [] };
  let scripted: Awaited<ReturnType<typeof startScriptedHttp>>;
  const transports: Transport[] = [];

  beforeAll(async () => {
    scripted = await startScriptedHttp((_, res) => {
      res.writeHead(next.status, { 'content-type': 'text/event-stream' });
      for (const chunk of next.chunks) res.write(chunk);
      res.end();
    });
  });
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await scripted.close();
  });

  const json = fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc
      .record(
        {
          model_name: fc.oneof(fc.string(), fc.anything()),
          text_output: fc.oneof(fc.string(), fc.integer(), fc.array(fc.string())),
          output_ids: fc.oneof(
            fc.array(fc.integer()),
            fc.array(fc.double()),
            fc.string(),
            fc.array(fc.array(fc.nat())),
          ),
          sequence_length: fc.oneof(fc.nat(), fc.string()),
          error: fc.oneof(fc.string(), fc.anything()),
          finish_reason: fc.string(),
          parameters: fc.anything(),
        },
        { requiredKeys: [] },
      )
      .map((v) => JSON.stringify(v)),
    fc.string(),
  );
  const frame = fc.oneof(
    json.map((d) => `data: ${d}\n\n`),
    json.map((d) => `data: ${d}\r\n\r\n`),
    fc.string().map((s) => `${s}\n`),
    fc.constantFrom(': comment\n\n', 'event: x\n', 'data:\n\n', '\n\n', 'data: {"text_output":"a"'),
  );
  /** Frames joined, then cut at random places: the parser must not care where chunks end. */
  const body = fc
    .tuple(fc.array(frame, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 4 }))
    .map(([frames, cuts]) => {
      const text = frames.join('');
      const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
      const chunks: string[] = [];
      let from = 0;
      for (const c of at) {
        chunks.push(text.slice(from, c));
        from = c;
      }
      chunks.push(text.slice(from));
      return chunks.filter((c) => c.length > 0);
    });

  it('a stream of random frames ends in chunks and one final chunk holding their text, or a TritonLlmError', async () => {
    const meta = fake.transport('http');
    const stream = httpTransport({ baseUrl: scripted.url });
    transports.push(stream);
    const transport: Transport = {
      ...meta,
      stream: (r, o) => stream.stream(r, o),
      infer: (r, o) => stream.infer(r, o),
    };
    const llms = ['tensorrt_llm_bls', 'ensemble', 'llmapi', 'tensorrt_llm', 'ensemble_unary'].map(
      (model) =>
        new TritonLlm({
          transport,
          model,
          tokenizer: fakeTokenizer,
          retry: { attempts: 1 },
          logger: { warn: () => undefined },
        }),
    );
    await Promise.all(llms.map((l) => l.schema()));
    let ended = 0;
    await fc.assert(
      fc.asyncProperty(
        body,
        fc.constantFrom(200, 200, 200, 400, 500, 503),
        fc.nat(llms.length - 1),
        async (chunks, status, i) => {
          next = { status, chunks };
          const llm = llms[i]!;
          const request =
            llm.model === 'tensorrt_llm' ? { inputIds: [5], maxTokens: 4 } : { prompt: 'hi', maxTokens: 4 };
          const err = await onlyTritonLlmErrors(async () =>
            llm.model === 'ensemble_unary'
              ? aResult(await llm.generate(request))
              : chunksThenFinal(llm.stream(request)),
          );
          if (err === undefined) ended += 1;
        },
      ),
      { numRuns: 400 },
    );
    // The shape checks are only worth something if some answers were read to their end.
    expect(ended).toBeGreaterThan(0);
  });
});
