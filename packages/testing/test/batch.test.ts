import { type ServiceError, status } from '@grpc/grpc-js';
import { encode, type FakeTriton, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { post, uniqueId, useFake } from './support/fake.js';
import {
  type InferResponseObject,
  inferRequest,
  int32,
  outputsOf,
  pack,
  streamAll,
  type TestTensor,
  text,
  unpack,
  type Value,
} from './support/grpc-client.js';

const h = useFake();

type Outputs = Map<string, { shape: number[]; values: Value[] }>;
type Transport = 'grpc' | 'http-json' | 'http-binary';

const product = (dims: readonly number[]) => dims.reduce((a, b) => a * b, 1);

function bools(name: string, values: readonly boolean[]): TestTensor {
  return { name, datatype: 'BOOL', shape: [values.length, 1], data: values };
}

/** One column of a batch: `[N, 1]` INT32. */
function column(name: string, values: readonly number[]): TestTensor {
  return int32(name, values, [values.length, 1]);
}

async function grpcInfer(model: string, inputs: readonly TestTensor[], id = ''): Promise<Outputs> {
  const r = await h.grpc.unary<InferResponseObject>('ModelInfer', inferRequest(model, inputs, { id }));
  return new Map([...outputsOf(r)].map(([name, t]) => [name, { shape: t.shape, values: t.values }]));
}

interface HttpOutput {
  readonly name: string;
  readonly datatype: string;
  readonly shape: number[];
  readonly data?: Value[];
  readonly parameters?: { readonly binary_data_size: number };
}

/** `/infer` with every tensor as nested JSON, or every tensor binary both ways. */
async function httpInfer(fake: FakeTriton, model: string, inputs: readonly TestTensor[], binary: boolean) {
  const path = `/v2/models/${model}/infer`;
  let res: Response;
  if (binary) {
    const blobs = inputs.map(pack);
    const header = Buffer.from(
      JSON.stringify({
        inputs: inputs.map((t, i) => ({
          name: t.name,
          datatype: t.datatype,
          shape: t.shape,
          parameters: { binary_data_size: blobs[i]!.length },
        })),
        parameters: { binary_data_output: true },
      }),
    );
    res = await post(fake, path, Buffer.concat([header, ...blobs]), {
      headers: { 'Inference-Header-Content-Length': String(header.length) },
    });
  } else {
    const rows = (t: TestTensor) => {
      const per = product(t.shape.slice(1));
      return Array.from({ length: t.shape[0]! }, (_, b) => t.data.slice(b * per, (b + 1) * per));
    };
    res = await post(fake, path, {
      inputs: inputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape, data: rows(t) })),
    });
  }
  expect(res.status).toBe(200);
  const payload = Buffer.from(await res.arrayBuffer());
  const jsonLength = Number(res.headers.get('inference-header-content-length') ?? payload.length);
  const json = JSON.parse(payload.subarray(0, jsonLength).toString()) as { outputs: HttpOutput[] };
  let at = jsonLength;
  const out: Outputs = new Map();
  for (const o of json.outputs) {
    const size = o.parameters?.binary_data_size;
    if (size === undefined) {
      out.set(o.name, { shape: o.shape, values: o.data ?? [] });
      continue;
    }
    out.set(o.name, { shape: o.shape, values: unpack(o.datatype, payload.subarray(at, at + size)) });
    at += size;
  }
  return out;
}

function infer(transport: Transport, model: string, inputs: readonly TestTensor[]): Promise<Outputs> {
  return transport === 'grpc'
    ? grpcInfer(model, inputs)
    : httpInfer(h.fake, model, inputs, transport === 'http-binary');
}

/**
 * Row `b` of every batched output is the single request's output, padded along its last dimension
 * (one beam each here) with `padOf(name)`; `batch_index` numbers the rows instead.
 */
function expectItem(batch: Outputs, b: number, single: Outputs, padOf: (name: string) => Value): void {
  expect([...batch.keys()]).toEqual([...single.keys()]);
  for (const [name, one] of single) {
    const stacked = batch.get(name)!;
    const rowDims = stacked.shape.slice(1);
    const per = product(rowDims);
    const row = stacked.values.slice(b * per, (b + 1) * per);
    if (name === 'batch_index') {
      expect(row, name).toEqual([b]);
      continue;
    }
    expect(one.shape.slice(0, -1), name).toEqual([1, ...rowDims.slice(0, -1)]);
    const missing = per - one.values.length;
    expect(row, `${name} of item ${b}`).toEqual([...one.values, ...Array<Value>(missing).fill(padOf(name))]);
  }
}

interface RawItem {
  readonly ids: readonly number[];
  readonly maxTokens: number;
  readonly endId: number;
  readonly logProbs: boolean;
  /** A raw stop word list row `[2, 1]`: one single-token word, or none. */
  readonly stopToken: number | undefined;
}

function rawBatch(items: readonly RawItem[]): TestTensor[] {
  const width = Math.max(...items.map((i) => i.ids.length));
  const n = items.length;
  return [
    int32(
      'input_ids',
      items.flatMap((i) => [...i.ids, ...Array<number>(width - i.ids.length).fill(0)]),
      [n, width],
    ),
    column(
      'input_lengths',
      items.map((i) => i.ids.length),
    ),
    column(
      'request_output_len',
      items.map((i) => i.maxTokens),
    ),
    column(
      'end_id',
      items.map((i) => i.endId),
    ),
    int32(
      'stop_words_list',
      items.flatMap((i) => (i.stopToken === undefined ? [0, -1] : [i.stopToken, 1])),
      [n, 2, 1],
    ),
    ...flagTensors(items),
  ];
}

/** The per-item flags both batches send: log probs as the item asks, token counts always. */
function flagTensors(items: readonly { readonly logProbs: boolean }[]): TestTensor[] {
  return [
    bools(
      'return_log_probs',
      items.map((i) => i.logProbs),
    ),
    bools(
      'return_num_input_tokens',
      items.map(() => true),
    ),
    bools(
      'return_num_output_tokens',
      items.map(() => true),
    ),
  ];
}

const RAW_ITEMS: readonly RawItem[] = [
  { ids: encode('What is ML?'), maxTokens: 3, endId: 2, logProbs: true, stopToken: undefined },
  { ids: encode('Hello world'), maxTokens: 9, endId: 999, logProbs: false, stopToken: undefined },
  {
    ids: encode(' data'),
    maxTokens: 7,
    endId: 2,
    logProbs: true,
    // The third token it would generate: the stop word ends it early.
    stopToken: generateTokens(encode(' data'), { maxTokens: 7 })[0]!.tokens[2],
  },
];

interface TextItem {
  readonly prompt: string;
  readonly maxTokens: number;
  readonly logProbs: boolean;
  readonly stopWords: readonly [string, string];
}

function textBatch(items: readonly TextItem[]): TestTensor[] {
  const n = items.length;
  return [
    text(
      'text_input',
      items.map((i) => i.prompt),
      [n, 1],
    ),
    column(
      'max_tokens',
      items.map((i) => i.maxTokens),
    ),
    text(
      'stop_words',
      items.flatMap((i) => i.stopWords),
      [n, 2],
    ),
    ...flagTensors(items),
  ];
}

const TEXT_ITEMS: readonly TextItem[] = [
  { prompt: 'What is ML?', maxTokens: 4, logProbs: true, stopWords: ['', ''] },
  { prompt: 'Hello world', maxTokens: 10, logProbs: false, stopWords: [' data', ' intelligence'] },
  { prompt: ' data', maxTokens: 9, logProbs: true, stopWords: [' make', ''] },
];

/** Row `b` of every input, as a request of its own (raw ids without the batch's padding). */
function rawSingle(item: RawItem): TestTensor[] {
  return rawBatch([item]);
}

const TRANSPORTS: readonly Transport[] = ['grpc', 'http-json', 'http-binary'];

describe('a batch on a non-decoupled model', () => {
  for (const transport of TRANSPORTS) {
    it(`tensorrt_llm_unary over ${transport} answers each row as a request of its own`, async () => {
      const batch = await infer(transport, 'tensorrt_llm_unary', rawBatch(RAW_ITEMS));
      const singles = await Promise.all(
        RAW_ITEMS.map((item) => infer(transport, 'tensorrt_llm_unary', rawSingle(item))),
      );
      const ids = batch.get('output_ids')!;
      expect(ids.shape[0]).toBe(3);
      // The rows have different lengths, so the stacked ids are padded.
      expect(new Set(singles.map((s) => s.get('output_ids')!.shape[2])).size).toBeGreaterThan(1);
      expect(ids.shape[2]).toBe(Math.max(...singles.map((s) => s.get('output_ids')!.shape[2]!)));
      expect(batch.get('batch_index')).toEqual({ shape: [3, 1], values: [0, 1, 2] });
      singles.forEach((single, b) => {
        expectItem(batch, b, single, (name) => (name === 'output_ids' ? RAW_ITEMS[b]!.endId : 0));
      });
    });

    it(`ensemble_unary over ${transport} answers each row as a request of its own`, async () => {
      const batch = await infer(transport, 'ensemble_unary', textBatch(TEXT_ITEMS));
      const singles = await Promise.all(
        TEXT_ITEMS.map((item) => infer(transport, 'ensemble_unary', textBatch([item]))),
      );
      expect(batch.get('text_output')!.shape).toEqual([3, 1]);
      expect(batch.get('batch_index')!.values).toEqual([0, 1, 2]);
      singles.forEach((single, b) => {
        expectItem(batch, b, single, () => 0);
      });
      // The second row's stop words did end it early, so rows really are read apart.
      expect(batch.get('num_output_tokens')!.values[1]).toBeLessThan(TEXT_ITEMS[1]!.maxTokens);
    });
  }

  it('preprocessing pads ids with 0 and word-list offsets with -1', async () => {
    const queries = ['Hello world', ' Machine learning is'];
    const stops = [
      ['', ''],
      [' data', 'What ML'],
    ];
    const inputs = (rows: number[]) => [
      text(
        'QUERY',
        rows.map((r) => queries[r]!),
        [rows.length, 1],
      ),
      column(
        'REQUEST_OUTPUT_LEN',
        rows.map((r) => r + 5),
      ),
      text(
        'STOP_WORDS_DICT',
        rows.flatMap((r) => stops[r]!),
        [rows.length, 2],
      ),
    ];
    const batch = await grpcInfer('preprocessing', inputs([0, 1]));
    const singles = await Promise.all([0, 1].map((r) => grpcInfer('preprocessing', inputs([r]))));
    const stopIds = batch.get('STOP_WORDS_IDS')!;
    const width = stopIds.shape[2]!;
    expect(stopIds.shape).toEqual([2, 2, width]);
    singles.forEach((single, b) => {
      const own = single.get('STOP_WORDS_IDS')!;
      const ownWidth = own.shape[2]!;
      const fill = (n: number, v: number) => Array<number>(n).fill(v);
      expect(stopIds.values.slice(b * 2 * width, (b + 1) * 2 * width)).toEqual([
        ...own.values.slice(0, ownWidth),
        ...fill(width - ownWidth, 0),
        ...own.values.slice(ownWidth),
        ...fill(width - ownWidth, -1),
      ]);
      const ids = batch.get('INPUT_ID')!;
      const idWidth = ids.shape[1]!;
      const ownIds = single.get('INPUT_ID')!.values;
      expect(ids.values.slice(b * idWidth, (b + 1) * idWidth)).toEqual([
        ...ownIds,
        ...fill(idWidth - ownIds.length, 0),
      ]);
      for (const name of ['REQUEST_INPUT_LEN', 'REQUEST_OUTPUT_LEN', 'OUT_END_ID', 'OUT_PAD_ID']) {
        expect(batch.get(name)!.values[b], name).toEqual(single.get(name)!.values[0]);
      }
    });
  });

  it('postprocessing decodes each row on its own', async () => {
    const rows = [encode('Hello world'), encode(' 机器学习')];
    const width = Math.max(...rows.map((r) => r.length));
    const batch = await grpcInfer('postprocessing', [
      int32(
        'TOKENS_BATCH',
        rows.flatMap((r) => [...r, ...Array<number>(width - r.length).fill(2)]),
        [2, 1, width],
      ),
      int32(
        'SEQUENCE_LENGTH',
        rows.map((r) => r.length),
        [2, 1],
      ),
    ]);
    expect(batch.get('OUTPUT')).toEqual({ shape: [2, 1], values: ['Hello world', ' 机器学习'] });
  });
});

describe('the event log of a batch', () => {
  // Paced, so that a long batch is still running when the client cancels it.
  const slow = useFake({ itlMs: 5 });
  const generated = (items: readonly RawItem[]) =>
    items.reduce(
      (n, i) =>
        n +
        generateTokens(i.ids, {
          maxTokens: i.maxTokens,
          endId: i.endId,
          ...(i.stopToken === undefined ? {} : { stopWords: [[i.stopToken]] }),
        })[0]!.tokens.length,
      0,
    );

  it('has one received and one completed event, with the tokens of every row', async () => {
    const id = uniqueId('batch');
    await grpcInfer('tensorrt_llm_unary', rawBatch(RAW_ITEMS), id);
    const events = h.fake.events().filter((e) => e.id === id);
    expect(events.map((e) => [e.model, e.event])).toEqual([
      ['tensorrt_llm_unary', 'received'],
      ['tensorrt_llm_unary', 'completed'],
    ]);
    expect(events[1]!.tokens).toBe(generated(RAW_ITEMS));
  });

  it('of ensemble_unary logs the ensemble and its generator once each', async () => {
    const id = uniqueId('ens-batch');
    const out = await grpcInfer('ensemble_unary', textBatch(TEXT_ITEMS), id);
    const tokens = out.get('num_output_tokens')!.values.reduce((a: number, v) => a + Number(v), 0);
    const events = h.fake.events().filter((e) => e.id === id);
    expect(events.map((e) => [e.model, e.event]).sort()).toEqual(
      [
        ['ensemble_unary', 'completed'],
        ['ensemble_unary', 'received'],
        ['tensorrt_llm_unary', 'completed'],
        ['tensorrt_llm_unary', 'received'],
      ].sort(),
    );
    expect(events.filter((e) => e.event === 'completed').map((e) => e.tokens)).toEqual([tokens, tokens]);
  });

  it('ends every row when the call is cancelled', async () => {
    const id = uniqueId('cancel-batch');
    const h = slow;
    const items = RAW_ITEMS.map((i) => ({ ...i, maxTokens: 100_000, stopToken: undefined }));
    const failed = new Promise<ServiceError | null>((resolve) => {
      const call = h.grpc.raw.ModelInfer(
        inferRequest('tensorrt_llm_unary', rawBatch(items), { id }),
        (err: ServiceError | null) => resolve(err),
      );
      void h.fake.waitForEvent((e) => e.id === id && e.event === 'received').then(() => call.cancel());
    });
    expect((await failed)?.code).toBe(status.CANCELLED);
    const cancelled = await h.fake.waitForEvent((e) => e.id === id && e.event === 'cancelled');
    expect(cancelled.tokens).toBeLessThan(3 * 100_000);
    expect(cancelled.tokens % 3).toBe(0);
    expect(
      h.fake
        .events()
        .filter((e) => e.id === id)
        .map((e) => e.event),
    ).toEqual(['received', 'cancelled']);
  });
});

describe('batches the fake refuses', () => {
  async function inferError(model: string, inputs: readonly TestTensor[]): Promise<ServiceError> {
    try {
      await h.grpc.unary('ModelInfer', inferRequest(model, inputs));
    } catch (err) {
      return err as ServiceError;
    }
    throw new Error('ModelInfer succeeded');
  }

  const mismatched = () => [
    int32('input_ids', [5, 6, 7, 8], [2, 2]),
    column('input_lengths', [2, 2]),
    column('request_output_len', [3]),
  ];
  const MISMATCH =
    "[request id: <id_unknown>] input 'request_output_len' batch size does not match other inputs for 'tensorrt_llm_unary'";

  it('with inputs of different batch sizes, over gRPC', async () => {
    const err = await inferError('tensorrt_llm_unary', mismatched());
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toBe(MISMATCH);
  });

  it('with inputs of different batch sizes, over HTTP', async () => {
    const res = await post(h.fake, '/v2/models/tensorrt_llm_unary/infer', {
      inputs: mismatched().map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape, data: t.data })),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: MISMATCH });
  });

  it('above max_batch_size (64)', async () => {
    const n = 65;
    const err = await inferError('tensorrt_llm_unary', [
      int32('input_ids', Array<number>(n).fill(7), [n, 1]),
      column('input_lengths', Array<number>(n).fill(1)),
      column('request_output_len', Array<number>(n).fill(1)),
    ]);
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toBe(
      "[request id: <id_unknown>] inference request batch-size must be <= 64 for 'tensorrt_llm_unary'",
    );
  });

  const decoupled: readonly [string, TestTensor[]][] = [
    ['tensorrt_llm', rawBatch(RAW_ITEMS.slice(0, 2))],
    ['ensemble', textBatch(TEXT_ITEMS.slice(0, 2))],
    ['tensorrt_llm_bls', [text('text_input', ['a', 'b'], [2, 1]), column('max_tokens', [2, 2])]],
    ['llmapi', [text('text_input', ['a', 'b'], [2, 1])]],
  ];
  for (const [model, inputs] of decoupled) {
    it(`on the decoupled ${model}, as the model's error`, async () => {
      const id = uniqueId(`${model}-batch`);
      const { messages, error } = await streamAll(h.grpc, [inferRequest(model, inputs, { id })]);
      expect(error).toBeUndefined();
      expect(messages.map((m) => m.error_message)).toEqual([
        'batch size 2 > 1 is only supported by non-decoupled models',
      ]);
      const events = h.fake.events().filter((e) => e.id === id);
      expect(events.map((e) => [e.model, e.event])).toEqual([
        [model, 'received'],
        [model, 'error'],
      ]);
    });
  }
});
