import { decode, encode, fakeScript, generateTokens, jsonSchemaInstance } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { post, uniqueId, useFake } from './support/fake.js';

const h = useFake();

describe('the instance of a JSON schema', () => {
  it.each<[string, unknown, unknown]>([
    ['a string', { type: 'string' }, 'text'],
    ['a number, its minimum', { type: 'number', minimum: 1.5 }, 1.5],
    ['a number without minimum', { type: 'number' }, 0],
    ['an integer, the smallest at or above its minimum', { type: 'integer', minimum: 2.5 }, 3],
    ['an integer with a negative fractional minimum', { type: 'integer', minimum: -0.5 }, 0],
    ['a boolean', { type: 'boolean' }, true],
    ['null', { type: 'null' }, null],
    ['a nullable string: the first type that is not null', { type: ['null', 'string'] }, 'text'],
    ['const', { type: 'string', const: 'fixed' }, 'fixed'],
    ['enum: its first value', { enum: ['b', 'a'] }, 'b'],
    ['anyOf: the first branch', { anyOf: [{ type: 'integer' }, { type: 'string' }] }, 0],
    ['oneOf: the first branch', { oneOf: [{ type: 'boolean' }, { type: 'string' }] }, true],
    [
      'an object: every property in schema order, required or not',
      { type: 'object', properties: { z: { type: 'string' }, a: { type: 'integer' } }, required: ['a'] },
      { z: 'text', a: 0 },
    ],
    ['an object without properties', { type: 'object', additionalProperties: true }, {}],
    ['an array: one item at least', { type: 'array', items: { type: 'string' } }, ['text']],
    [
      'an array: minItems items',
      { type: 'array', items: { type: 'boolean' }, minItems: 3 },
      [true, true, true],
    ],
    [
      'a tuple (prefixItems), then items',
      {
        type: 'array',
        prefixItems: [{ type: 'string' }, { type: 'integer' }],
        items: { const: 9 },
        minItems: 3,
      },
      ['text', 0, 9],
    ],
    ['a draft-07 tuple (items as a list)', { type: 'array', items: [{ type: 'boolean' }] }, [true]],
    ['an array without items', { type: 'array' }, [null]],
    ['no type but properties', { properties: { x: { type: 'null' } } }, { x: null }],
    ['no type but items', { items: { type: 'integer', minimum: 4 } }, [4]],
    ['the empty schema', {}, null],
    ['a boolean schema', true, null],
    [
      'allOf: branches merged, properties concatenated',
      { allOf: [{ properties: { a: { type: 'string' } } }, { properties: { b: { type: 'boolean' } } }] },
      { a: 'text', b: true },
    ],
    [
      'a local $ref',
      { $defs: { city: { type: 'object', properties: { name: { type: 'string' } } } }, $ref: '#/$defs/city' },
      { name: 'text' },
    ],
    [
      'a recursive $ref: null where it comes back',
      {
        $defs: {
          node: {
            type: 'object',
            properties: { value: { type: 'integer' }, next: { $ref: '#/$defs/node' } },
          },
        },
        $ref: '#/$defs/node',
      },
      { value: 0, next: null },
    ],
    ['a $ref that points nowhere', { $ref: '#/$defs/missing' }, null],
    ['a $ref to another document', { $ref: 'https://example.com/schema.json' }, null],
  ])('%s', (_name, schema, expected) => {
    expect(jsonSchemaInstance(schema)).toEqual(expected);
  });

  it('keeps a property named __proto__ as an ordinary key', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}');
    expect(JSON.stringify(jsonSchemaInstance(schema))).toBe('{"__proto__":"text"}');
  });
});

const WEATHER = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    unit: { enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1 },
    hourly: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
  },
  required: ['city'],
};
// The rule of GENERATOR.md applied by hand.
const WEATHER_INSTANCE = { city: 'text', unit: 'celsius', days: 1, hourly: true, tags: ['text', 'text'] };

async function generate(model: string, body: Record<string, unknown>): Promise<Response> {
  return post(h.fake, `/v2/models/${model}/generate`, body);
}

describe('guided decoding on the fake', () => {
  it('answers a json_schema guide with the JSON text of its instance, and logs the guide', async () => {
    const id = uniqueId('guided');
    const res = await generate('ensemble_unary', {
      id,
      text_input: 'Weather?',
      max_tokens: 200,
      exclude_input_in_output: true,
      guided_decoding_guide_type: 'json_schema',
      guided_decoding_guide: JSON.stringify(WEATHER),
    });
    const text = ((await res.json()) as { text_output: string }).text_output;
    expect(JSON.parse(text)).toEqual(WEATHER_INSTANCE);
    expect(text).toBe(JSON.stringify(WEATHER_INSTANCE));
    const received = await h.fake.waitForEvent(
      (e) => e.id === id && e.model === 'tensorrt_llm_unary' && e.event === 'received',
    );
    expect(received.guide).toBe('json_schema');
  });

  it('cuts the JSON at max tokens', async () => {
    const res = await generate('tensorrt_llm_unary', {
      input_ids: [259],
      input_lengths: 1,
      request_output_len: 4,
      exclude_input_in_output: true,
      guided_decoding_guide_type: 'json_schema',
      guided_decoding_guide: JSON.stringify(WEATHER),
    });
    const body = (await res.json()) as { output_ids: number[] };
    expect(body.output_ids).toEqual(encode(JSON.stringify(WEATHER_INSTANCE)).slice(0, 4));
  });

  it('answers the json guide type with {}', async () => {
    const res = await generate('ensemble_unary', {
      text_input: 'Any JSON',
      max_tokens: 20,
      exclude_input_in_output: true,
      guided_decoding_guide_type: 'json',
    });
    expect(((await res.json()) as { text_output: string }).text_output).toBe('{}');
  });

  it('leaves other guide types to the corpus, but logs them', async () => {
    const id = uniqueId('regex');
    const res = await generate('ensemble_unary', {
      id,
      text_input: 'What is ML?',
      max_tokens: 12,
      exclude_input_in_output: true,
      guided_decoding_guide_type: 'regex',
      guided_decoding_guide: '[a-z]+',
    });
    const expected = decode(generateTokens(encode('What is ML?'), { maxTokens: 12 })[0]!.tokens);
    expect(((await res.json()) as { text_output: string }).text_output).toBe(expected);
    const received = await h.fake.waitForEvent((e) => e.id === id && e.event === 'received');
    expect(received.guide).toBe('regex');
  });

  it('lets a script win over the guide, still logging the guide', async () => {
    const id = uniqueId('script-guide');
    const res = await generate('ensemble_unary', {
      id,
      text_input: fakeScript('not JSON at all'),
      max_tokens: 50,
      exclude_input_in_output: true,
      guided_decoding_guide_type: 'json_schema',
      guided_decoding_guide: JSON.stringify(WEATHER),
    });
    expect(((await res.json()) as { text_output: string }).text_output).toBe('not JSON at all');
    const received = await h.fake.waitForEvent((e) => e.id === id && e.event === 'received');
    expect(received.guide).toBe('json_schema');
  });

  it('refuses a json_schema guide that is not JSON', async () => {
    const res = await generate('tensorrt_llm_unary', {
      input_ids: [259],
      input_lengths: 1,
      request_output_len: 4,
      guided_decoding_guide_type: 'json_schema',
      guided_decoding_guide: '{type: object}',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain('must be a JSON schema');
  });

  it('records no guide when the request has none', async () => {
    const id = uniqueId('plain');
    await generate('tensorrt_llm_unary', { id, input_ids: [259], input_lengths: 1, request_output_len: 2 });
    const received = await h.fake.waitForEvent((e) => e.id === id && e.event === 'received');
    expect(received).not.toHaveProperty('guide');
  });
});
