import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TritonLlmError } from '../src/errors.js';
import { decodeWordList, encodeWordList, wordListTensor } from '../src/tensors/word-list.js';

function thrown(fn: () => unknown): TritonLlmError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  }
  throw new Error('expected a TritonLlmError, nothing was thrown');
}

/** The [batch][row][column] view of an encoded list, to compare with the protocol notes' notation. */
function nested(list: { shape: readonly number[]; data: Int32Array }): number[][][] {
  const [batch, , width] = list.shape as [number, number, number];
  return Array.from({ length: batch }, (_, b) =>
    [0, 1].map((row) => Array.from(list.data.subarray((b * 2 + row) * width, (b * 2 + row + 1) * width))),
  );
}

describe('encodeWordList', () => {
  it('lays out the documented example: "a b" -> [5, 6] and "c" -> [7]', () => {
    const list = encodeWordList([[[5, 6], [7]]]);
    expect(list.shape).toEqual([1, 2, 3]);
    expect(nested(list)).toEqual([
      [
        [5, 6, 7],
        [2, 3, -1],
      ],
    ]);
  });

  it('pads every item to the longest item, ids with 0 and offsets with -1', () => {
    const list = encodeWordList([[[1]], [[2, 3], [4]]]);
    expect(list.shape).toEqual([2, 2, 3]);
    expect(nested(list)).toEqual([
      [
        [1, 0, 0],
        [1, -1, -1],
      ],
      [
        [2, 3, 4],
        [2, 3, -1],
      ],
    ]);
  });

  it('gives an item without words a row of padding when others have words', () => {
    expect(nested(encodeWordList([[], [[9]]]))).toEqual([
      [[0], [-1]],
      [[9], [1]],
    ]);
  });

  it('skips words without tokens', () => {
    expect(nested(encodeWordList([[[1], [], [2, 3]]]))).toEqual([
      [
        [1, 2, 3],
        [1, 3, -1],
      ],
    ]);
  });

  it.each([
    [
      [[], []],
      [2, 2, 0],
    ],
    [[[[], []]], [1, 2, 0]],
    [[], [0, 2, 0]],
  ])('has width 0 when there are no words at all: %j', (batch, shape) => {
    const list = encodeWordList(batch);
    expect(list.shape).toEqual(shape);
    expect(list.data.length).toBe(0);
  });

  it('keeps int32 extremes', () => {
    const list = encodeWordList([[[-(2 ** 31), 2 ** 31 - 1]]]);
    expect(Array.from(list.data)).toEqual([-(2 ** 31), 2 ** 31 - 1, 2, -1]);
  });

  it.each<[unknown, string, RegExp]>([
    [[[[1], [2.5]]], 'stopWords', /^stopWords\[1\]\[0\]: a token id must be an int32 integer \(got 2.5\)/],
    [[[[1]], [[2, 2 ** 31]]], 'badWords', /^badWords\[1\]\[0\]\[1\]: .*\(got 2147483648\)/],
    [[[[-(2 ** 31) - 1]]], 'stopWords', /^stopWords\[0\]\[0\]: .*\(got -2147483649\)/],
    [[[['7']]], 'stopWords', /^stopWords\[0\]\[0\]: .*\(got "7"\)/],
    [[[[Number.NaN]]], 'stopWords', /^stopWords\[0\]\[0\]: .*\(got NaN\)/],
    [[[[1], 2]], 'stopWords', /^stopWords\[1\]: a word is an array of token ids \(got 2\)/],
    [[[[1]], 'x'], 'stopWords', /^stopWords\[1\]: expected an array of words/],
    ['x', 'stopWords', /^stopWords: expected one list of words per batch item/],
  ])('refuses %j naming the offending entry of %s', (batch, field, message) => {
    const err = thrown(() => encodeWordList(batch as number[][][], field));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toMatch(message);
  });

  it('names the tensor in errors of wordListTensor', () => {
    const err = thrown(() => wordListTensor('stop_words_list', [[[0.5]]]));
    expect(err.message).toMatch(/^stop_words_list\[0\]\[0\]: /);
  });
});

describe('wordListTensor', () => {
  it('is an INT32 tensor of the encoded layout', () => {
    const t = wordListTensor('bad_words_list', [[[5, 6], [7]]]);
    expect(t.name).toBe('bad_words_list');
    expect(t.datatype).toBe('INT32');
    expect(t.shape).toEqual([1, 2, 3]);
    expect(Array.from(t.data as Int32Array)).toEqual([5, 6, 7, 2, 3, -1]);
  });
});

describe('decodeWordList', () => {
  const id = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
  const batches = fc.array(fc.array(fc.array(id, { maxLength: 4 }), { maxLength: 4 }), { maxLength: 4 });

  it('inverts encodeWordList, minus the words without tokens', () => {
    fc.assert(
      fc.property(batches, (batch) => {
        const { shape, data } = encodeWordList(batch);
        expect(decodeWordList(shape, data)).toEqual(batch.map((words) => words.filter((w) => w.length > 0)));
      }),
    );
  });

  it('sizes the layout to the most ids any item has', () => {
    fc.assert(
      fc.property(batches, (batch) => {
        const { shape, data } = encodeWordList(batch);
        const longest = Math.max(0, ...batch.map((words) => words.flat().length));
        expect(shape).toEqual([batch.length, 2, longest]);
        expect(data.length).toBe(batch.length * 2 * longest);
      }),
    );
  });

  it('reads plain number arrays too', () => {
    expect(decodeWordList([1, 2, 3], [5, 6, 7, 2, 3, -1])).toEqual([[[5, 6], [7]]]);
  });

  it.each<[number[], number[], RegExp]>([
    [[1, 3, 1], [1, 2, 3], /shape \[1, 3, 1\]: expected \[batch, 2, N\]/],
    [[2, 1], [1, 2], /expected \[batch, 2, N\]/],
    [[1, 2, -1], [], /dimensions must be non-negative integers/],
    [[1, 2, 2], [5, 6, 2], /expected 4 values, got 3/],
    [[1, 2, 2], [5, 6, 2, 1], /item 0: end offset 1 must exceed 2/],
    [[1, 2, 2], [5, 6, 0, -1], /item 0: end offset 0 must exceed 0/],
    [[1, 2, 2], [5, 6, 3, -1], /end offset 3 must exceed 0 and be at most 2/],
    [[1, 2, 2], [5, 6, -1, 2], /item 0: offset 2 follows the -1 padding/],
    [[1, 2, 2], [5, 6, -2, -1], /end offset -2/],
    [[1, 2, 1], [5.5, 1], /value 5.5 at index 0 is not an integer/],
  ])('refuses shape %j with data %j as protocol', (shape, data, message) => {
    const err = thrown(() => decodeWordList(shape, data));
    expect(err.code).toBe('protocol');
    expect(err.message).toMatch(/^malformed word list of shape /);
    expect(err.message).toMatch(message);
  });
});
