import { decode, encode, fakeScript, generateTokens, parseFakeScript, tokenLogProb } from '@trtllm/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { post, uniqueId, useFake } from './support/fake.js';

const h = useFake();

const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

describe('the fake-script marker', () => {
  it.each([
    ['no marker', 'What is ML?', undefined],
    ['one marker', `Q: ${fakeScript('Paris')} A:`, 'Paris'],
    ['the last marker of several', `${fakeScript('first')} then ${fakeScript('second')}`, 'second'],
    ['an empty script', fakeScript(''), ''],
    ['a padded payload', `[[fake-script:${base64url('ab')}==]]`, 'ab'],
    ['a payload that cannot be base64url is no marker', '[[fake-script:abcde]]', undefined],
    ['a bad payload does not hide an earlier marker', `${fakeScript('kept')}[[fake-script:Z]]`, 'kept'],
    ['a marker without its closing brackets', '[[fake-script:UGFyaXM', undefined],
    ['bytes that are not UTF-8 read as U+FFFD', '[[fake-script:_w]]', '\uFFFD'],
  ])('%s', (_name, prompt, expected) => {
    expect(parseFakeScript(prompt)).toBe(expected);
  });

  it('refuses a text that is not a string, naming the argument', () => {
    expect(() => fakeScript(42 as unknown as string)).toThrow(
      'fakeScript(text): text must be a string, got number',
    );
  });

  it('carries any text through any prompt around it', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string(), fc.string(), (text, before, after) => {
        // A marker inside `after` would win; the generator of strings cannot produce one by chance
        // often, but the property states the rule as written.
        fc.pre(parseFakeScript(after) === undefined);
        expect(parseFakeScript(`${before}${fakeScript(text)}${after}`)).toBe(text);
      }),
    );
  });

  it('survives tokenization: the decoded prompt ids still hold it', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(parseFakeScript(decode(encode(`What is ML? ${fakeScript(text)}`)))).toBe(text);
      }),
    );
  });
});

describe('a scripted generation', () => {
  const script = 'The answer is 42.';
  const S = encode(script);

  it('is encode(script), finishing stop when it fits and length when max tokens cuts it', () => {
    const whole = generateTokens([259], { maxTokens: S.length, script })[0]!;
    expect(whole.tokens).toEqual(S);
    expect(whole.finishReason).toBe('stop');
    const cut = generateTokens([259], { maxTokens: 3, script })[0]!;
    expect(cut.tokens).toEqual(S.slice(0, 3));
    expect(cut.finishReason).toBe('length');
    expect(generateTokens([259], { maxTokens: 0, script })[0]!.finishReason).toBe('length');
    expect(generateTokens([259], { maxTokens: 5, script: '' })[0]).toMatchObject({
      tokens: [],
      finishReason: 'stop',
    });
  });

  it('ignores end id, min tokens, stop and bad words and seed; every sequence is the script', () => {
    const seqs = generateTokens([1, 2, 3], {
      maxTokens: 100,
      script,
      endId: S[1]!,
      minTokens: 50,
      stopWords: [[S[0]!]],
      badWords: [[S[2]!]],
      seed: 99n,
      numReturnSequences: 2,
      returnLogProbs: true,
    });
    expect(seqs.map((s) => s.tokens)).toEqual([S, S]);
    expect(seqs[0]!.logProbs).toEqual(S.map(tokenLogProb));
  });
});

describe('the fake generates the script', () => {
  it('for any text, through the ensemble, cut at max_tokens', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary' }),
        fc.integer({ min: 0, max: 40 }),
        async (text, maxTokens) => {
          const res = await post(h.fake, '/v2/models/ensemble_unary/generate', {
            text_input: `Tell me. ${fakeScript(text)}`,
            max_tokens: maxTokens,
            exclude_input_in_output: true,
          });
          const body = (await res.json()) as { text_output: string };
          expect(body.text_output).toBe(decode(encode(text).slice(0, maxTokens)));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('from the raw model, reading the marker in the prompt ids', async () => {
    const ids = encode(`<s>user ${fakeScript('ok, done')}`);
    const res = await post(h.fake, '/v2/models/tensorrt_llm_unary/generate', {
      input_ids: ids,
      input_lengths: ids.length,
      request_output_len: 50,
      exclude_input_in_output: true,
    });
    const body = (await res.json()) as { output_ids: number[] };
    expect(body.output_ids).toEqual(encode('ok, done'));
  });

  it('per batch item, each from its own prompt', async () => {
    const res = await post(h.fake, '/v2/models/ensemble_unary/infer', {
      inputs: [
        {
          name: 'text_input',
          datatype: 'BYTES',
          shape: [2, 1],
          data: [fakeScript('first item'), fakeScript('second')],
        },
        { name: 'max_tokens', datatype: 'INT32', shape: [2, 1], data: [50, 3] },
        { name: 'exclude_input_in_output', datatype: 'BOOL', shape: [2, 1], data: [true, true] },
      ],
      outputs: [{ name: 'text_output' }],
    });
    const body = (await res.json()) as { outputs: { name: string; data: string[] }[] };
    expect(body.outputs[0]!.data).toEqual(['first item', decode(encode('second').slice(0, 3))]);
  });

  it('from the fake_script parameter, which wins over a marker', async () => {
    const res = await post(h.fake, '/v2/models/ensemble_unary/generate', {
      text_input: fakeScript('marker'),
      max_tokens: 50,
      exclude_input_in_output: true,
      parameters: { fake_script: 'parameter' },
    });
    expect(((await res.json()) as { text_output: string }).text_output).toBe('parameter');
  });

  it('refuses a fake_script parameter that is not a string, logging the refusal', async () => {
    const id = uniqueId('script');
    const res = await post(h.fake, '/v2/models/tensorrt_llm_unary/generate', {
      id,
      input_ids: [259],
      input_lengths: 1,
      request_output_len: 5,
      parameters: { fake_script: 7 },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain("'fake_script' must be a string");
    await h.fake.waitForEvent((e) => e.id === id && e.event === 'error');
  });

  it('from the LLM-API model', async () => {
    const res = await post(h.fake, '/v2/models/llmapi/generate_stream', {
      text_input: `Hi ${fakeScript('scripted 🤖')}`,
      sampling_param_max_tokens: 64,
      streaming: true,
      return_finish_reason: true,
    });
    const body = await res.text();
    const last = JSON.parse(body.trim().split('\n\n').at(-1)!.slice('data: '.length)) as Record<
      string,
      string
    >;
    expect(last.text_output).toBe('scripted 🤖');
    expect(last.finish_reason).toBe('stop');
  });
});
