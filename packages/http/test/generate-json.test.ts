import { createTensor, type InferRequest, type Tensor, TritonLlmError } from '@trtllm/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateRequestJson } from '../src/transport/generate-request.js';

function request(inputs: Tensor[], extra: Partial<InferRequest> = {}): InferRequest {
  return { model: 'ensemble', id: 'r1', inputs, ...extra };
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof TritonLlmError) return err.code;
    throw err;
  }
  return undefined;
}

describe('generate request JSON', () => {
  it('writes id, then inputs in request order, then parameters', () => {
    const body = generateRequestJson(
      request(
        [
          createTensor('text_input', 'BYTES', [1, 1], ['Hi']),
          createTensor('max_tokens', 'INT32', [1, 1], [5]),
          createTensor('stream', 'BOOL', [1, 1], [true]),
        ],
        { parameters: { priority: 2, tag: 'x' } },
      ),
    );
    expect(Object.keys(JSON.parse(body))).toEqual(['id', 'text_input', 'max_tokens', 'stream', 'parameters']);
    expect(JSON.parse(body)).toEqual({
      id: 'r1',
      text_input: 'Hi',
      max_tokens: 5,
      stream: true,
      parameters: { priority: 2, tag: 'x' },
    });
  });

  it('drops the batch dimension: [1,1], [1] and [] become scalars, [1,N] a flat array', () => {
    const body = JSON.parse(
      generateRequestJson(
        request([
          createTensor('a', 'INT32', [1, 1], [7]),
          createTensor('b', 'INT32', [1], [8]),
          createTensor('c', 'INT32', [], [9]),
          createTensor('stop_words', 'BYTES', [1, 2], ['focuses', 'learn']),
          createTensor('d', 'FP32', [1, 0], []),
        ]),
      ),
    );
    expect(body).toMatchObject({ a: 7, b: 8, c: 9, stop_words: ['focuses', 'learn'], d: [] });
  });

  it('writes 64-bit integers with every digit', () => {
    const big = 2n ** 63n - 1n;
    const body = generateRequestJson(
      request([
        createTensor('seed', 'UINT64', [1, 1], [2n ** 64n - 1n]),
        createTensor('ids', 'INT64', [1, 2], [big, -big]),
      ]),
    );
    expect(body).toContain(`"seed":${2n ** 64n - 1n}`);
    expect(body).toContain(`"ids":[${big},${-big}]`);
  });

  it('omits an empty id', () => {
    const body = generateRequestJson(request([createTensor('a', 'INT32', [1, 1], [1])], { id: '' }));
    expect(JSON.parse(body)).toEqual({ a: 1 });
  });

  it('refuses a raw word list [1,2,N] and a batch above 1 as unimplemented', () => {
    const words = createTensor('stop_words_list', 'INT32', [1, 2, 3], [5, 6, 7, 2, 3, -1]);
    expect(codeOf(() => generateRequestJson(request([words])))).toBe('unimplemented');
    const batch = createTensor('max_tokens', 'INT32', [2, 1], [5, 6]);
    expect(codeOf(() => generateRequestJson(request([batch])))).toBe('unimplemented');
    expect(() => generateRequestJson(request([words]))).toThrow(/gRPC/);
  });

  it('refuses bytes that are not UTF-8, NaN, and an input named id', () => {
    const bytes = createTensor('text_input', 'BYTES', [1, 1], [new Uint8Array([0xff, 0xfe])]);
    expect(codeOf(() => generateRequestJson(request([bytes])))).toBe('invalid_argument');
    const nan = createTensor('temperature', 'FP32', [1, 1], [Number.NaN]);
    expect(codeOf(() => generateRequestJson(request([nan])))).toBe('invalid_argument');
    const id = createTensor('id', 'INT32', [1, 1], [1]);
    expect(codeOf(() => generateRequestJson(request([id])))).toBe('invalid_argument');
  });

  it('round-trips any int32 row and any string row through JSON', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { minLength: 2, maxLength: 20 }),
        fc.array(fc.string({ unit: 'grapheme' }), { minLength: 2, maxLength: 10 }),
        (ints, strings) => {
          const body = JSON.parse(
            generateRequestJson(
              request([
                createTensor('input_ids', 'INT32', [1, ints.length], ints),
                createTensor('bad_words', 'BYTES', [1, strings.length], strings),
              ]),
            ),
          );
          expect(body.input_ids).toEqual(ints);
          expect(body.bad_words).toEqual(strings);
        },
      ),
    );
  });

  it('writes any 64-bit integer exactly', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (value) => {
        const body = generateRequestJson(request([createTensor('seed', 'INT64', [1, 1], [value])]));
        expect(body).toBe(`{"id":"r1","seed":${value.toString()}}`);
      }),
    );
  });
});
