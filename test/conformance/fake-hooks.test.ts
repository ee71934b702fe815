import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeScript, fakeTokenizer } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { describeEachServer, streamed, useServer } from './servers.js';

// ASCII, so that the ensemble's per-token streaming (which breaks multi-byte characters) keeps it whole.
const SCRIPT = 'Calling get_weather: {"city": "Paris", "days": 3}';
const SCRIPT_TOKENS = fakeTokenizer.encode(SCRIPT).length;

const WEATHER = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    unit: { enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1 },
    hourly: { type: 'boolean' },
    tags: { type: 'array', items: { $ref: '#/$defs/tag' }, minItems: 2 },
    where: { anyOf: [{ $ref: '#/$defs/point' }, { type: 'null' }] },
    extra: { allOf: [{ properties: { a: { const: 1.0 } } }, { properties: { b: { type: 'number' } } }] },
  },
  required: ['city'],
  $defs: {
    tag: { type: 'string' },
    point: { type: 'object', properties: { lat: { type: 'number', minimum: -90 }, lon: { type: 'number' } } },
  },
};
// GENERATOR.md "Guided decoding" applied by hand: every property in order, first enum value, minimum
// or 0, minItems items, the first anyOf branch, $refs followed, allOf merged.
const WEATHER_INSTANCE = {
  city: 'text',
  unit: 'celsius',
  days: 1,
  hourly: true,
  tags: ['text', 'text'],
  where: { lat: -90, lon: 0 },
  extra: { a: 1, b: 0 },
};

const TEXT_MODELS = ['ensemble', 'ensemble_unary', 'tensorrt_llm_bls', 'tensorrt_llm_bls_per_token'] as const;
const RAW_MODELS = ['tensorrt_llm', 'tensorrt_llm_unary'] as const;
const GUIDED_MODELS = [...TEXT_MODELS, ...RAW_MODELS];

describeEachServer('conformance: fake hooks on the %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  const llm = (model: string) =>
    new TritonLlm({ transport: server().transport(protocol), model, tokenizer: fakeTokenizer });
  const decoupled = (model: string) => !model.endsWith('_unary');

  describe('scripted output', () => {
    it.each([...TEXT_MODELS, ...RAW_MODELS, 'llmapi'])(
      '%s generates the marker script exactly, finishing stop',
      async (model) => {
        const result = await llm(model).generate({
          prompt: `You are a weather bot. ${fakeScript(SCRIPT)} What is the weather?`,
          maxTokens: 100,
        });
        expect(result.text).toBe(SCRIPT);
        expect(result.finishReason).toBe('stop');
      },
    );

    it.each([...TEXT_MODELS, ...RAW_MODELS, 'llmapi'].filter(decoupled))(
      '%s streams the marker script exactly',
      async (model) => {
        const { text, final } = await streamed(
          llm(model).stream({
            prompt: `${fakeScript('an old turn')} later: ${fakeScript(SCRIPT)}`,
            maxTokens: 100,
          }),
        );
        expect(text).toBe(SCRIPT);
        expect(final.finishReason).toBe('stop');
      },
    );

    it.each([...TEXT_MODELS, ...RAW_MODELS])(
      '%s cuts the script at maxTokens with finish length',
      async (model) => {
        const maxTokens = SCRIPT_TOKENS - 5;
        const expected = fakeTokenizer.decode(fakeTokenizer.encode(SCRIPT).slice(0, maxTokens));
        const result = decoupled(model)
          ? (await streamed(llm(model).stream({ prompt: fakeScript(SCRIPT), maxTokens }))).final
          : await llm(model).generate({ prompt: fakeScript(SCRIPT), maxTokens });
        expect(result.text).toBe(expected);
        expect(result.finishReason).toBe('length');
      },
    );

    it.each(['ensemble_unary', 'tensorrt_llm_unary'])(
      '%s scripts each item of a batch from its own prompt',
      async (model) => {
        const results = await llm(model).generateBatch([
          { prompt: fakeScript('first item'), maxTokens: 50 },
          { prompt: `x ${fakeScript(SCRIPT)}`, maxTokens: 4 },
        ]);
        expect(results.map((r) => r.text)).toEqual([
          'first item',
          fakeTokenizer.decode(fakeTokenizer.encode(SCRIPT).slice(0, 4)),
        ]);
        expect(results.map((r) => r.finishReason)).toEqual(['stop', 'length']);
      },
    );

    it('keeps multi-byte characters whole where the model decodes whole sequences', async () => {
      const script = '天气: 晴 ☀️, 22 °C';
      for (const model of ['ensemble', 'tensorrt_llm_bls', 'tensorrt_llm']) {
        const result = await llm(model).generate({ prompt: fakeScript(script), maxTokens: 100 });
        expect(result.text).toBe(script);
      }
      const { text } = await streamed(
        llm('tensorrt_llm_bls').stream({ prompt: fakeScript(script), maxTokens: 100 }),
      );
      expect(text).toBe(script);
    });

    it.each(['ensemble', 'tensorrt_llm_bls', 'tensorrt_llm', 'tensorrt_llm_unary', 'llmapi'])(
      '%s takes the fake_script request parameter over a marker',
      async (model) => {
        const result = await llm(model).generate({
          prompt: `Hello ${fakeScript('from the marker')}`,
          maxTokens: 100,
          parameters: { fake_script: SCRIPT },
        });
        expect(result.text).toBe(SCRIPT);
      },
    );

    it('refuses a fake_script parameter that is not a string, on the server', async () => {
      const err = await llm('tensorrt_llm')
        .generate({ prompt: 'Hello', maxTokens: 5, parameters: { fake_script: 7 } })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TritonLlmError);
      expect((err as TritonLlmError).code).toBe('invalid_argument');
      expect((err as TritonLlmError).message).toContain('fake_script');
    });

    it('still refuses parameters named triton_* before sending anything', async () => {
      const before = server().events().length;
      const err = await llm('ensemble')
        .generate({ prompt: 'Hello', maxTokens: 5, parameters: { triton_fake_script: SCRIPT } })
        .catch((e: unknown) => e);
      expect((err as TritonLlmError).code).toBe('invalid_argument');
      expect((err as TritonLlmError).message).toContain('triton_fake_script');
      expect(server().events().length).toBe(before);
    });
  });

  describe('guided decoding', () => {
    // -90.0: the Python stand-in parses it as a float and must still write -90, as JavaScript does.
    const guide = JSON.stringify(WEATHER).replace('"minimum":-90', '"minimum":-90.0');
    const guidedDecoding = { type: 'json_schema', guide };

    it.each(GUIDED_MODELS)('%s answers a JSON schema with its documented instance', async (model) => {
      const result = await llm(model).generate({
        prompt: 'Weather in Paris?',
        maxTokens: 200,
        guidedDecoding,
      });
      expect(JSON.parse(result.text)).toEqual(WEATHER_INSTANCE);
      expect(result.finishReason).toBe('stop');
    });

    it.each(GUIDED_MODELS.filter(decoupled))('%s streams the instance', async (model) => {
      const { text } = await streamed(
        llm(model).stream({ prompt: 'Weather?', maxTokens: 200, guidedDecoding }),
      );
      expect(JSON.parse(text)).toEqual(WEATHER_INSTANCE);
    });

    it('answers the json guide type with an empty object', async () => {
      const result = await llm('ensemble').generate({
        prompt: 'Any JSON',
        maxTokens: 20,
        guidedDecoding: { type: 'json' },
      });
      expect(JSON.parse(result.text)).toEqual({});
    });

    it('records the guide type on the generator received event', async () => {
      const result = await llm('ensemble').generate({ prompt: 'Weather?', maxTokens: 200, guidedDecoding });
      const received = await server().waitForEvent(
        (e) => e.model === 'tensorrt_llm' && e.id === result.requestId && e.event === 'received',
      );
      expect(received.guide).toBe('json_schema');
      const plain = await llm('tensorrt_llm').generate({ prompt: 'Weather?', maxTokens: 2 });
      const unguided = await server().waitForEvent(
        (e) => e.model === 'tensorrt_llm' && e.id === plain.requestId && e.event === 'received',
      );
      expect(unguided.guide).toBeUndefined();
    });

    it('lets a script win over the guide, which is still recorded', async () => {
      const result = await llm('tensorrt_llm_bls').generate({
        prompt: `Weather? ${fakeScript(SCRIPT)}`,
        maxTokens: 100,
        guidedDecoding,
      });
      expect(result.text).toBe(SCRIPT);
      const received = await server().waitForEvent(
        (e) => e.model === 'tensorrt_llm' && e.id === result.requestId && e.event === 'received',
      );
      expect(received.guide).toBe('json_schema');
    });

    it('refuses a json_schema guide that is not JSON', async () => {
      const err = await llm('tensorrt_llm')
        .generate({
          prompt: 'Weather?',
          maxTokens: 5,
          guidedDecoding: { type: 'json_schema', guide: '{city' },
        })
        .catch((e: unknown) => e);
      expect((err as TritonLlmError).code).toBe('invalid_argument');
      expect((err as TritonLlmError).message).toContain('guided_decoding_guide must be a JSON schema');
    });
  });
});
