import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TritonLlmError } from '../src/errors.js';
import { planBatches, splitBatchResponse } from '../src/models/batch.js';
import type { EncodedRequest } from '../src/models/encode-request.js';
import { tensorNumbers, tensorStrings } from '../src/tensors/readers.js';
import { createTensor, type Tensor } from '../src/tensors/tensor.js';
import { decodeWordList, encodeWordList } from '../src/tensors/word-list.js';
import type { InferResponse } from '../src/transport.js';

function rawRequest(id: string, ids: number[], words: number[][], extra: Tensor[] = []): EncodedRequest {
  const list = encodeWordList([words]);
  return {
    promptExcluded: true,
    serverMatchesStops: true,
    request: {
      model: 'tensorrt_llm',
      id,
      inputs: [
        createTensor('input_ids', 'INT32', [1, ids.length], ids),
        createTensor('input_lengths', 'INT32', [1, 1], [ids.length]),
        { name: 'stop_words_list', datatype: 'INT32', shape: list.shape, data: list.data },
        ...extra,
      ],
      outputs: ['output_ids', 'sequence_length'],
    },
  };
}

const ids = fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 8 });
const words = fc.array(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 3 }), {
  maxLength: 3,
});

describe('planBatches', () => {
  it('stacks ragged rows so that each row reads back as its own request', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(ids, words), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 4 }),
        (items, max) => {
          const encoded = items.map(([i, w], n) => rawRequest(String(n), i, w));
          const groups = planBatches(encoded, max);
          expect(groups.flatMap((g) => g.members).sort((a, b) => a - b)).toEqual(items.map((_, n) => n));
          for (const group of groups) {
            expect(group.members.length).toBeLessThanOrEqual(max);
            const byName = new Map(group.request.inputs.map((t) => [t.name, t]));
            const inputIds = byName.get('input_ids')!;
            const lengths = tensorNumbers(byName.get('input_lengths')!);
            const width = inputIds.shape[1]!;
            const flat = tensorNumbers(inputIds);
            const lists = decodeWordList(
              byName.get('stop_words_list')!.shape,
              byName.get('stop_words_list')!.data as Int32Array,
            );
            group.members.forEach((m, row) => {
              const [wantIds, wantWords] = items[m]!;
              expect(flat.slice(row * width, row * width + lengths[row]!)).toEqual(wantIds);
              expect(lists[row]).toEqual(wantWords);
            });
            expect(group.request.id).toBe(String(group.members[0]));
          }
        },
      ),
    );
  });

  it('keeps requests apart when inputs differ and when the caller chose the id', () => {
    const temperature = createTensor('temperature', 'FP32', [1, 1], [0.5]);
    const encoded = [
      rawRequest('a', [1], []),
      rawRequest('b', [2, 3], [], [temperature]),
      rawRequest('c', [4], [[9]]),
      rawRequest('d', [5], []),
    ];
    const groups = planBatches(encoded, 64, [false, false, false, true]);
    expect(groups.map((g) => g.members)).toEqual([[0, 2], [1], [3]]);
    expect(groups[0]!.request.endpoint).toBe('infer');
    expect(groups[2]!.request.id).toBe('d');
  });
});

describe('splitBatchResponse', () => {
  const response = (outputs: Tensor[]): InferResponse => ({
    model: 'ensemble',
    modelVersion: '1',
    id: '7',
    outputs,
    parameters: {},
    final: true,
  });

  it('gives each item its row, ordered by batch_index, and unbatched outputs to all', () => {
    const parts = splitBatchResponse(
      response([
        createTensor('text_output', 'BYTES', [3, 1], ['x', 'y', 'z']),
        createTensor('batch_index', 'INT32', [3, 1], [2, 0, 1]),
        createTensor('context_logits', 'FP32', [1], [0]),
      ]),
      3,
    );
    expect(parts.map((p) => tensorStrings(p.outputs.find((t) => t.name === 'text_output')!))).toEqual([
      ['y'],
      ['z'],
      ['x'],
    ]);
    expect(parts.every((p) => p.outputs.some((t) => t.name === 'context_logits'))).toBe(true);
    expect(parts[0]!.outputs[0]!.shape).toEqual([1, 1]);
  });

  it('refuses a batch_index that is not a permutation', () => {
    const bad = response([
      createTensor('text_output', 'BYTES', [2, 1], ['x', 'y']),
      createTensor('batch_index', 'INT32', [2, 1], [0, 0]),
    ]);
    expect(() => splitBatchResponse(bad, 2)).toThrow(TritonLlmError);
  });
});
