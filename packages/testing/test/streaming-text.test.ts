import { CORPUS_IDS, decode, encode, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { post, sseEvents, useFake } from './support/fake.js';
import {
  bool,
  carriesTensors,
  inferRequest,
  int32,
  isFinal,
  output,
  streamAll,
  text,
  textInputs,
} from './support/grpc-client.js';

const h = useFake();

// A prompt whose reply is the Chinese sentence of the corpus (GENERATOR.md): characters split over tokens; its
// first 10 tokens (a space and three characters) end on a whole character.
const PROMPT = 'Hello world.';
const MAX_TOKENS = 10;
const TOKENS = generateTokens(encode(PROMPT), { maxTokens: MAX_TOKENS })[0]!.tokens;

async function streamedTexts(model: string): Promise<string[]> {
  const { messages } = await streamAll(h.grpc, [
    inferRequest(model, textInputs(PROMPT, MAX_TOKENS, [bool('stream', true)])),
  ]);
  return messages
    .map((m) => m.infer_response!)
    .filter(carriesTensors)
    .map((r) => String(output(r, 'text_output').values[0]));
}

describe('streamed text', () => {
  it('uses a prompt whose output really splits characters', () => {
    expect(TOKENS.some((t) => decode([t]) === '\uFFFD')).toBe(true);
    expect(decode(TOKENS)).not.toContain('\uFFFD');
  });

  it('decodes each token alone on the ensemble, so split characters arrive as U+FFFD', async () => {
    expect(await streamedTexts('ensemble')).toEqual(TOKENS.map((t) => decode([t])));
  });

  it('decodes each token alone on the per-token BLS model', async () => {
    expect(await streamedTexts('tensorrt_llm_bls_per_token')).toEqual(TOKENS.map((t) => decode([t])));
  });

  it('sends cumulative text on the accumulating BLS model, correct once a character is whole', async () => {
    const texts = await streamedTexts('tensorrt_llm_bls');
    expect(texts).toEqual(TOKENS.map((_, i) => decode(TOKENS.slice(0, i + 1))));
    expect(texts.at(-1)).toBe(decode(TOKENS));
  });

  it('returns the correct text without streaming, prompt first unless excluded', async () => {
    const [withPrompt, without] = await Promise.all(
      [false, true].map((exclude) =>
        post(h.fake, '/v2/models/ensemble/generate', {
          text_input: PROMPT,
          max_tokens: MAX_TOKENS,
          exclude_input_in_output: exclude,
        }).then((r) => r.json() as Promise<{ text_output: string }>),
      ),
    );
    expect(withPrompt!.text_output).toBe(decode([...encode(PROMPT), ...TOKENS]));
    expect(without!.text_output).toBe(decode(TOKENS));
  });

  it('streams U+FFFD per token over HTTP as well', async () => {
    const res = await post(h.fake, '/v2/models/ensemble/generate_stream', {
      text_input: PROMPT,
      max_tokens: MAX_TOKENS,
      stream: true,
    });
    expect(sseEvents(await res.text()).map((e) => e.text_output)).toEqual(TOKENS.map((t) => decode([t])));
  });

  it('matches stop words on token ids: " data" stops, "data" does not', async () => {
    const prompt = 'x';
    const run = (stop: string) =>
      post(h.fake, '/v2/models/ensemble/generate', {
        text_input: prompt,
        max_tokens: 200,
        stop_words: [stop],
        exclude_input_in_output: true,
      }).then((r) => r.json() as Promise<{ text_output: string }>);
    const spaced = await run(' data');
    expect(spaced.text_output.endsWith(' data')).toBe(true);
    const bare = await run('data');
    expect(bare.text_output).toBe(decode(generateTokens(encode(prompt), { maxTokens: 200 })[0]!.tokens));
    expect(CORPUS_IDS).toContain(encode(' data')[0]);
  });

  it('returns beams in one response and separate sequences one response each', async () => {
    const ids = encode(PROMPT);
    const beams = await streamAll(h.grpc, [
      inferRequest(
        'ensemble',
        textInputs(PROMPT, 4, [int32('beam_width', [3]), bool('exclude_input_in_output', true)]),
      ),
    ]);
    const r = beams.messages[0]!.infer_response!;
    expect(output(r, 'text_output')).toMatchObject({
      shape: [1, 3],
      values: generateTokens(ids, { maxTokens: 4, beamWidth: 3 }).map((s) => decode(s.tokens)),
    });
    const seqs = await streamAll(h.grpc, [
      inferRequest(
        'ensemble',
        textInputs(PROMPT, 4, [int32('num_return_sequences', [2]), bool('exclude_input_in_output', true)]),
      ),
    ]);
    const data = seqs.messages.map((m) => m.infer_response!).filter(carriesTensors);
    expect(data.map((x) => output(x, 'sequence_index').values[0])).toEqual([0, 1]);
    expect(data.map((x) => output(x, 'text_output').values[0])).toEqual(
      generateTokens(ids, { maxTokens: 4, numReturnSequences: 2 }).map((s) => decode(s.tokens)),
    );
  });

  it('returns log probs when asked', async () => {
    const { messages } = await streamAll(h.grpc, [
      inferRequest(
        'ensemble',
        textInputs(PROMPT, 5, [bool('return_log_probs', true), bool('exclude_input_in_output', true)]),
      ),
    ]);
    const r = messages[0]!.infer_response!;
    const [seq] = generateTokens(encode(PROMPT), { maxTokens: 5, returnLogProbs: true });
    expect(output(r, 'output_log_probs').values).toEqual(seq!.logProbs);
    expect(output(r, 'cum_log_probs').values).toEqual([seq!.cumLogProb]);
  });

  it('gives the seed a say in where the output starts', async () => {
    const run = (seed: number) =>
      post(h.fake, '/v2/models/ensemble/generate', {
        text_input: PROMPT,
        max_tokens: 6,
        seed,
        exclude_input_in_output: true,
      }).then((r) => r.json() as Promise<{ text_output: string }>);
    const seeded = await run(11);
    expect(seeded.text_output).toBe(
      decode(generateTokens(encode(PROMPT), { maxTokens: 6, seed: 11 })[0]!.tokens),
    );
    expect(seeded.text_output).not.toBe((await run(0)).text_output);
  });

  it('streams cumulative, whole-character text from the LLM-API model, the last response final', async () => {
    const { messages } = await streamAll(h.grpc, [
      inferRequest('llmapi', [
        text('text_input', [PROMPT]),
        int32('sampling_param_max_tokens', [MAX_TOKENS]),
        bool('streaming', true),
        bool('return_finish_reason', true),
      ]),
    ]);
    const responses = messages.map((m) => m.infer_response!);
    expect(responses).toHaveLength(MAX_TOKENS);
    const texts = responses.map((r) => String(output(r, 'text_output').values[0]));
    expect(texts.every((t) => !t.includes('\uFFFD'))).toBe(true);
    expect(texts.at(-1)).toBe(decode(TOKENS));
    expect(responses.map((r) => isFinal(r))).toEqual([...Array(MAX_TOKENS - 1).fill(false), true]);
    expect(output(responses.at(-1)!, 'finish_reason').values).toEqual(['length']);
  });
});
