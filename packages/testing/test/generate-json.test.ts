import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InferenceRequest, ModelResponse } from '../src/engine/request.js';
import { generateJson } from '../src/http/generate.js';
import { jsonValues, stringify } from '../src/http/json.js';
import type { DataType } from '../src/models/tensor-spec.js';
import type { Tensor } from '../src/tensor.js';
import { post, sseEvents, useFake } from './support/fake.js';

// generateJson writes an event piece by piece; the reference is the general writer (an object
// through `stringify`, bigints by its replacer), which is what the events were before.
function reference(id: string, model: string, outputs: readonly Tensor[]): string {
  const out: Record<string, unknown> = {};
  if (id !== '') out.id = id;
  out.model_name = model;
  out.model_version = '1';
  for (const t of outputs) {
    const values = jsonValues(t);
    out[t.name] = values.length === 1 ? values[0] : values;
  }
  return stringify(out);
}

const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const uint64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const anyFloat = fc.oneof(
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0),
);

// Output names an object can hold as plain keys (the reference is an object: `__proto__` would set
// its prototype, and the event's own keys would be overwritten).
const RESERVED = new Set(['__proto__', 'id', 'model_name', 'model_version']);
const outputName = fc.stringMatching(/^[a-z_]{1,12}$/).filter((n) => !RESERVED.has(n));

function tensorOf(datatype: DataType, data: fc.Arbitrary<unknown>): fc.Arbitrary<Tensor> {
  return fc
    .record({
      name: outputName,
      data: fc.array(data, { minLength: 1, maxLength: 4 }),
    })
    .map(({ name, data: values }) => ({
      name,
      datatype,
      shape: [1, values.length],
      data: values as Tensor['data'],
    }));
}

const tensor = fc.oneof(
  tensorOf('INT64', int64),
  tensorOf('UINT64', uint64),
  tensorOf('INT32', fc.integer()),
  tensorOf('UINT8', fc.integer({ min: 0, max: 255 })),
  tensorOf('BOOL', fc.boolean()),
  tensorOf('FP32', anyFloat),
  tensorOf('FP64', anyFloat),
  // Any bytes, malformed UTF-8 included (both writers print U+FFFD for it).
  tensorOf(
    'BYTES',
    fc.oneof(
      fc.uint8Array({ maxLength: 12 }),
      fc.string({ unit: 'grapheme' }).map((s) => new TextEncoder().encode(s)),
    ),
  ),
);

describe('generate events', () => {
  it('are the text the general JSON writer gives for the same outputs, on any outputs', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constant(''), fc.string({ unit: 'grapheme' })),
        fc.stringMatching(/^[a-z_]{1,16}$/),
        // Distinct names: an event is an object, so a repeated name could not be printed twice.
        fc.uniqueArray(tensor, { selector: (t) => t.name, maxLength: 8 }),
        (id, model, outputs) => {
          const req = { id, model: { name: model } } as unknown as InferenceRequest;
          const response: ModelResponse = { outputs, tokens: 1, final: false };
          const text = generateJson(req, response);
          expect(text).toBe(reference(id, model, outputs));
          // And it is JSON.
          expect(() => JSON.parse(text)).not.toThrow();
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('print 64-bit integers in full, past what a double holds', () => {
    const req = { id: 'r"1', model: { name: 'ensemble' } } as unknown as InferenceRequest;
    const big = 2n ** 63n - 1n;
    const text = generateJson(req, {
      outputs: [
        { name: 'arrival_time_ns', datatype: 'INT64', shape: [1, 1], data: [big] },
        { name: 'ids', datatype: 'UINT64', shape: [1, 2], data: [2n ** 64n - 1n, 0n] },
      ],
      tokens: 1,
      final: false,
    });
    expect(text).toBe(
      '{"id":"r\\"1","model_name":"ensemble","model_version":"1","arrival_time_ns":9223372036854775807,"ids":[18446744073709551615,0]}',
    );
  });

  const h = useFake();

  it('stream from the fake as objects with the model, its version and every output', async () => {
    const res = await post(h.fake, '/v2/models/ensemble/generate_stream', {
      id: 'ev-1',
      text_input: 'Hello',
      max_tokens: 3,
      stream: true,
    });
    expect(res.status).toBe(200);
    const events = sseEvents(await res.text());
    expect(events.length).toBeGreaterThanOrEqual(3);
    for (const body of events) {
      expect(body.id).toBe('ev-1');
      expect(body.model_name).toBe('ensemble');
      expect(body.model_version).toBe('1');
      expect(typeof body.text_output).toBe('string');
      expect(typeof body.arrival_time_ns).toBe('number');
    }
  });
});
