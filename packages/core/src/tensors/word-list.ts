import { invalidArgument, TritonLlmError } from '../errors.js';
import type { Tensor } from './tensor.js';

/**
 * A batch of word lists in the layout of the raw `tensorrt_llm` model's `stop_words_list` and
 * `bad_words_list` inputs: INT32 `[batch, 2, N]`, row-major.
 */
export interface EncodedWordList {
  readonly shape: [number, 2, number];
  readonly data: Int32Array;
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

// With a batch of one (one request, the usual case) the batch index is left out of error paths,
// so `stopWords[1][0]` points into the caller's own list of words.
function pathOf(field: string, batchSize: number, item: number): string {
  return batchSize === 1 ? field : `${field}[${item}]`;
}

function flatten(words: unknown, path: string): { ids: number[]; ends: number[] } {
  if (!Array.isArray(words))
    throw invalidArgument(path, words, 'expected an array of words (token id arrays)');
  const ids: number[] = [];
  const ends: number[] = [];
  words.forEach((word: unknown, w) => {
    if (!Array.isArray(word)) throw invalidArgument(`${path}[${w}]`, word, 'a word is an array of token ids');
    word.forEach((id: unknown, i) => {
      if (typeof id !== 'number' || !Number.isInteger(id) || id < INT32_MIN || id > INT32_MAX) {
        throw invalidArgument(`${path}[${w}][${i}]`, id, 'a token id must be an int32 integer');
      }
      ids.push(id);
    });
    // A word without tokens can never match, and an offset equal to the previous one would be ambiguous.
    if (word.length > 0) ends.push(ids.length);
  });
  return { ids, ends };
}

/**
 * Lays out word lists (stop words or bad words, each word a token id sequence), one list per batch
 * item, as TensorRT-LLM expects them: for each item, row 0 holds all words' ids back to back,
 * padded with 0, and row 1 the offset where each word ends, padded with -1; both rows are as long
 * as the longest row 0 in the batch. Words without tokens are skipped; with no words at all the
 * shape is `[batch, 2, 0]`. `field` names the list in `invalid_argument` errors (`stopWords[1][0]`).
 */
export function encodeWordList(
  batch: readonly (readonly (readonly number[])[])[],
  field = 'words',
): EncodedWordList {
  if (!Array.isArray(batch)) throw invalidArgument(field, batch, 'expected one list of words per batch item');
  const rows = batch.map((words: unknown, b) => flatten(words, pathOf(field, batch.length, b)));
  // TensorRT-LLM's preprocessing pads to max(1, longest); every word has at least one id and so
  // at most as many offsets as ids, which makes that the longest row 0 whenever any word exists.
  const width = rows.reduce((longest, row) => Math.max(longest, row.ids.length), 0);
  const data = new Int32Array(batch.length * 2 * width);
  rows.forEach(({ ids, ends }, b) => {
    const start = b * 2 * width;
    data.set(ids, start);
    data.fill(-1, start + width, start + 2 * width);
    data.set(ends, start + width);
  });
  return { shape: [batch.length, 2, width], data };
}

/** {@link encodeWordList} as an INT32 tensor named `name` (e.g. `stop_words_list`). */
export function wordListTensor(
  name: string,
  batch: readonly (readonly (readonly number[])[])[],
  field = name,
): Tensor {
  const { shape, data } = encodeWordList(batch, field);
  return { name, datatype: 'INT32', shape, data };
}

/**
 * The inverse of {@link encodeWordList}: per batch item, the words as token id arrays. A layout
 * that is not `[batch, 2, N]` with strictly increasing end offsets followed only by -1 padding is
 * a `protocol` error.
 */
export function decodeWordList(shape: readonly number[], data: ArrayLike<number>): number[][][] {
  const fail = (why: string) =>
    new TritonLlmError('protocol', `malformed word list of shape [${shape.join(', ')}]: ${why}`);
  if (shape.length !== 3 || shape[1] !== 2) throw fail('expected [batch, 2, N]');
  const [batchSize, , width] = shape as [number, 2, number];
  if (![batchSize, width].every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw fail('dimensions must be non-negative integers');
  }
  if (data.length !== batchSize * 2 * width) {
    throw fail(`expected ${batchSize * 2 * width} values, got ${data.length}`);
  }
  const at = (i: number): number => {
    const v = data[i]!;
    if (!Number.isInteger(v)) throw fail(`value ${v} at index ${i} is not an integer`);
    return v;
  };
  const batch: number[][][] = [];
  for (let b = 0; b < batchSize; b++) {
    const ids = b * 2 * width;
    const offsets = ids + width;
    const words: number[][] = [];
    let start = 0;
    let j = 0;
    for (; j < width && at(offsets + j) !== -1; j++) {
      const end = at(offsets + j);
      if (end <= start || end > width) {
        throw fail(`item ${b}: end offset ${end} must exceed ${start} and be at most ${width}`);
      }
      const word: number[] = [];
      for (let i = start; i < end; i++) word.push(at(ids + i));
      words.push(word);
      start = end;
    }
    for (; j < width; j++) {
      if (at(offsets + j) !== -1) throw fail(`item ${b}: offset ${at(offsets + j)} follows the -1 padding`);
    }
    batch.push(words);
  }
  return batch;
}
