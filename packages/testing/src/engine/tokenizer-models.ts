/**
 * `preprocessing` and `postprocessing`, the tokenizer steps of the ensemble, callable on their own;
 * a batch is each row done on its own, stacked.
 */
import { int32Tensor, type Tensor, textTensor } from '../tensor.js';
import { decode, END_ID, encode, PAD_ID } from '../vocabulary.js';
import { batchSize, splitBatch, stackResponses } from './batch.js';
import type { EngineContext } from './context.js';
import { type Inputs, intInput, intsInput, textsInput } from './inputs.js';
import type { InferenceRequest, ModelResponse, ResponseSink } from './request.js';

/**
 * Batch rows padded as the official preprocessing pads them: word lists' offsets with -1, ids (and
 * everything else) with 0, the tokenizer's pad id.
 */
function padWordLists(name: string, _item: number, at: readonly number[]): number | undefined {
  const wordList = name === 'BAD_WORDS_IDS' || name === 'STOP_WORDS_IDS';
  return wordList && at[0] === 1 ? -1 : undefined;
}

/** The raw model's `[1, 2, N]` word list of `words` (row 0 padded with 0, row 1 with -1). */
export function wordListTensor(name: string, words: readonly string[]): Tensor {
  const ids = words.map(encode).filter((w) => w.length > 0);
  const flat = ids.flat();
  const offsets: number[] = [];
  let end = 0;
  for (const w of ids) {
    end += w.length;
    offsets.push(end);
  }
  const width = Math.max(1, flat.length);
  const row0 = [...flat, ...Array<number>(width - flat.length).fill(0)];
  const row1 = [...offsets, ...Array<number>(width - offsets.length).fill(-1)];
  return int32Tensor(name, [1, 2, width], [...row0, ...row1]);
}

function preprocess(inputs: Inputs): Tensor[] {
  const ids = encode(textsInput(inputs, 'QUERY')?.[0] ?? '');
  return [
    int32Tensor('INPUT_ID', [1, ids.length], ids),
    int32Tensor('REQUEST_INPUT_LEN', [1, 1], [ids.length]),
    wordListTensor('BAD_WORDS_IDS', textsInput(inputs, 'BAD_WORDS_DICT') ?? []),
    wordListTensor('STOP_WORDS_IDS', textsInput(inputs, 'STOP_WORDS_DICT') ?? []),
    int32Tensor('REQUEST_OUTPUT_LEN', [1, 1], [intInput(inputs, 'REQUEST_OUTPUT_LEN') ?? 0]),
    int32Tensor('OUT_END_ID', [1, 1], [intInput(inputs, 'END_ID') ?? END_ID]),
    int32Tensor('OUT_PAD_ID', [1, 1], [intInput(inputs, 'PAD_ID') ?? PAD_ID]),
  ];
}

function postprocess(inputs: Inputs): Tensor[] {
  const tokens = inputs.get('TOKENS_BATCH');
  const ids = intsInput(inputs, 'TOKENS_BATCH') ?? [];
  const lengths = intsInput(inputs, 'SEQUENCE_LENGTH') ?? [];
  const beams = tokens?.shape[1] ?? 1;
  const width = tokens?.shape[2] ?? ids.length;
  const texts = Array.from({ length: beams }, (_, b) =>
    decode(ids.slice(b * width, b * width + (lengths[b] ?? width))),
  );
  return [textTensor('OUTPUT', [1, beams], texts)];
}

export async function executeTokenizerModel(
  req: InferenceRequest,
  sink: ResponseSink,
  ctx: EngineContext,
): Promise<void> {
  const base = { model: req.model.name, id: req.id, tokens: 0, protocol: req.protocol } as const;
  ctx.events.record({ ...base, event: 'received' });
  const steps = req.model.kind === 'preprocessing' ? preprocess : postprocess;
  const items = splitBatch(req.inputs, batchSize(req.inputs)).map(
    (row): ModelResponse => ({ outputs: steps(row), tokens: 0, final: true }),
  );
  const delivery = await sink.send(stackResponses(items, padWordLists));
  if (delivery !== 'ok') {
    ctx.events.record({ ...base, event: delivery === 'cancelled' ? 'cancelled' : 'error' });
    return;
  }
  ctx.events.record({ ...base, event: 'completed' });
  sink.complete();
}
