import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type GenerateRequest, TritonLlm, TritonLlmError, type TritonLlmOptions } from '../src/index.js';
import { validateRequest } from '../src/transport-kit.js';

function errorOf(request: unknown): TritonLlmError {
  try {
    validateRequest(request as GenerateRequest);
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  }
  throw new Error('expected validateRequest to throw');
}

describe('validateRequest', () => {
  const base = { prompt: 'hi', maxTokens: 4 };

  it.each<[object, string, string]>([
    [{ prompt: '', maxTokens: 4 }, 'prompt', '""'],
    [{ prompt: 'hi', maxTokens: 0 }, 'maxTokens', '0'],
    [{ ...base, temperature: Number.NaN }, 'temperature', 'NaN'],
    [{ ...base, temperature: -1 }, 'temperature', '-1'],
    [{ ...base, topP: 0 }, 'topP', '0'],
    [{ ...base, topP: 1.5 }, 'topP', '1.5'],
    [{ ...base, beamWidth: 0 }, 'beamWidth', '0'],
    [{ inputIds: [1, 2 ** 31], maxTokens: 4 }, 'inputIds[1]', '2147483648'],
    [{ ...base, stopWords: ['ok', ''] }, 'stopWords[1]', '""'],
    [{ ...base, stopWordIds: [[1], []] }, 'stopWordIds[1]', '[]'],
    [{ ...base, seed: -1 }, 'seed', '-1'],
    [{ ...base, seed: 1n << 64n }, 'seed', '18446744073709551616n'],
    [{ ...base, maxNewTokens: 3 }, 'maxNewTokens', '3'],
    [
      { ...base, parameters: { triton_enable_empty_final_response: true } },
      'parameters.triton_enable_empty_final_response',
      'true',
    ],
    [{ ...base, requestId: 'has space' }, 'requestId', '"has space"'],
  ])('refuses a bad value (case %#)', (request, field, shown) => {
    const err = errorOf(request);
    expect(err.code).toBe('invalid_argument');
    expect(err.field).toBe(field);
    expect(err.message.startsWith(`${field}:`)).toBe(true);
    expect(err.message).toContain(shown);
  });

  it('accepts every well-formed request', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            prompt: fc.string({ minLength: 1 }),
            maxTokens: fc.integer({ min: 1, max: 1 << 20 }),
            temperature: fc.double({ min: 0, max: 10, noNaN: true }),
            topP: fc.double({ min: 0.001, max: 1, noNaN: true }),
            topK: fc.nat(1000),
            beamWidth: fc.integer({ min: 1, max: 8 }),
            seed: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
            stopWords: fc.array(fc.string({ minLength: 1 }), { maxLength: 4 }),
          },
          { requiredKeys: ['prompt', 'maxTokens'] },
        ),
        (request) => {
          expect(() => validateRequest(request)).not.toThrow();
        },
      ),
    );
  });

  it('names the field for any out-of-range maxTokens', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ max: 0 }),
          fc.double({ noInteger: true }),
          fc.constant(Number.POSITIVE_INFINITY),
        ),
        (maxTokens) => {
          const err = errorOf({ prompt: 'x', maxTokens });
          expect(err.code).toBe('invalid_argument');
          expect(err.field).toBe('maxTokens');
          expect(err.message.startsWith('maxTokens:')).toBe(true);
        },
      ),
    );
  });
});

describe('the field of a validation error', () => {
  it('stays when the error gains its request id and model on the way up', () => {
    const err = errorOf({ prompt: 'x', maxTokens: 4, stopWords: ['a', 'b', ''] });
    const withContext = err.withContext({ requestId: '17', model: 'ensemble' });
    expect(withContext).not.toBe(err);
    expect([withContext.field, withContext.requestId, withContext.model]).toEqual([
      'stopWords[2]',
      '17',
      'ensemble',
    ]);
  });

  it('names the client option or argument at fault', async () => {
    const fieldOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return err instanceof TritonLlmError ? err.field : err;
      }
    };
    expect(fieldOf(() => new TritonLlm({ model: 'ensemble' } as unknown as TritonLlmOptions))).toBe(
      'transport',
    );
    const transport = { protocol: 'grpc' } as unknown as TritonLlmOptions['transport'];
    expect(fieldOf(() => new TritonLlm({ transport, model: '' }))).toBe('model');
    await expect(new TritonLlm({ transport, model: 'ensemble' }).generateBatch([])).rejects.toMatchObject({
      field: 'requests',
    });
  });

  it('is absent from errors about no input of the caller', () => {
    expect(new TritonLlmError('unavailable', 'connection refused').field).toBeUndefined();
  });
});
