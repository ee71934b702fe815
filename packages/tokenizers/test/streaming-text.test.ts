import { IncrementalDetokenizer } from '@trtllm/sdk';
import { StopSequenceMatcher } from '@trtllm/sdk/transport';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunk, load, mixedText, REAL_TOKENIZERS } from './real-tokenizers.js';

function stream(
  detokenizer: IncrementalDetokenizer,
  chunks: readonly (readonly number[])[],
): { deltas: string[]; text: string } {
  const deltas = chunks.map((ids) => detokenizer.push(ids));
  deltas.push(detokenizer.flush());
  return { deltas, text: deltas.join('') };
}

describe.each(REAL_TOKENIZERS)('streaming text with $name', (real) => {
  it('streams text one id at a time exactly as the full decode, never showing U+FFFD', async () => {
    const tokenizer = await load(real);
    await fc.assert(
      fc.asyncProperty(mixedText, async (text) => {
        const ids = tokenizer.encode(text);
        const full = tokenizer.decode(ids);
        const { deltas, text: streamed } = stream(
          new IncrementalDetokenizer(tokenizer),
          ids.map((id) => [id]),
        );
        expect(streamed).toBe(full);
        for (const delta of deltas) expect(delta).not.toContain('\uFFFD');
      }),
      { numRuns: 150 },
    );
  });

  it('streams text in random chunks exactly as the full decode', async () => {
    const tokenizer = await load(real);
    await fc.assert(
      fc.asyncProperty(
        mixedText,
        fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 8 }),
        async (text, sizes) => {
          const ids = tokenizer.encode(text);
          const { deltas, text: streamed } = stream(new IncrementalDetokenizer(tokenizer), chunk(ids, sizes));
          expect(streamed).toBe(tokenizer.decode(ids));
          for (const delta of deltas) expect(delta).not.toContain('\uFFFD');
        },
      ),
      { numRuns: 150 },
    );
  });

  it('streams any id sequence, special tokens and broken bytes included, exactly as the full decode', async () => {
    const tokenizer = await load(real);
    const specials = [tokenizer.endId, tokenizer.padId, tokenizer.bosId].filter((id) => id !== undefined);
    // Runs of ids cut out of real text, so characters split over ids arrive cut off, out of order or whole.
    const pieceOfText = fc.tuple(mixedText, fc.nat(), fc.nat()).map(([text, from, length]) => {
      const ids = tokenizer.encode(text);
      const start = from % (ids.length + 1);
      return ids.slice(start, start + (length % 6));
    });
    const segment = fc.oneof(
      fc.array(fc.integer({ min: 0, max: tokenizer.vocabSize - 1 }), { maxLength: 3 }),
      fc.array(fc.constantFrom(...specials), { maxLength: 2 }),
      pieceOfText,
      pieceOfText,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { maxLength: 8 }).map((segments) => segments.flat()),
        fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 6 }),
        fc.boolean(),
        async (ids, sizes, skipSpecialTokens) => {
          const detokenizer = new IncrementalDetokenizer(tokenizer, { skipSpecialTokens });
          const { text: streamed } = stream(detokenizer, chunk(ids, sizes));
          expect(streamed).toBe(tokenizer.decode(ids, { skipSpecialTokens }));
          expect(detokenizer.ids).toEqual(ids);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('streams a completion after a prompt with the text it adds in context', async () => {
    const tokenizer = await load(real);
    await fc.assert(
      fc.asyncProperty(mixedText, mixedText, async (prompt, completion) => {
        const prefixIds = tokenizer.encode(prompt, { addSpecialTokens: true });
        const ids = tokenizer.encode(completion);
        const before = tokenizer.decode(prefixIds);
        const all = tokenizer.decode([...prefixIds, ...ids]);
        expect(all.startsWith(before)).toBe(true);
        const { text } = stream(
          new IncrementalDetokenizer(tokenizer, { prefixIds }),
          ids.map((id) => [id]),
        );
        expect(text).toBe(all.slice(before.length));
      }),
      { numRuns: 100 },
    );
  });

  it('cuts streamed text at a stop sequence exactly where the full text is cut', async () => {
    const tokenizer = await load(real);
    const stop = fc.constantFrom('机器', ' world', '🤖', '\n\n', 'lo w');
    await fc.assert(
      fc.asyncProperty(mixedText, fc.array(stop, { minLength: 1, maxLength: 3 }), async (text, stops) => {
        const ids = tokenizer.encode(text);
        const full = tokenizer.decode(ids);
        const cuts = stops.map((s) => full.indexOf(s)).filter((i) => i >= 0);
        const expected = cuts.length === 0 ? full : full.slice(0, Math.min(...cuts));
        const detokenizer = new IncrementalDetokenizer(tokenizer);
        const matcher = new StopSequenceMatcher(stops);
        let out = '';
        for (const id of ids) out += matcher.push(detokenizer.push([id])).emit;
        out += matcher.push(detokenizer.flush()).emit;
        out += matcher.flush();
        expect(out).toBe(expected);
        expect(matcher.matched !== undefined).toBe(cuts.length > 0);
      }),
      { numRuns: 100 },
    );
  });
});

describe('the problems the detokenizer exists for', () => {
  it('keeps the SentencePiece leading spaces that decoding ids one at a time loses', async () => {
    const llama = await load(REAL_TOKENIZERS[0]!);
    const ids = llama.encode('Hello world, how are you');
    const oneByOne = ids.map((id) => llama.decode([id])).join('');
    expect(oneByOne).toBe('Helloworld,howareyou');
    const detokenizer = new IncrementalDetokenizer(llama);
    expect(
      stream(
        detokenizer,
        ids.map((id) => [id]),
      ).text,
    ).toBe('Hello world, how are you');
  });

  it('holds back a character split over byte-level tokens until it is complete', async () => {
    const qwen = await load(REAL_TOKENIZERS[1]!);
    const ids = qwen.encode(' 🤖 机器学习');
    const oneByOne = ids.map((id) => qwen.decode([id]));
    expect(oneByOne.some((text) => text.includes('\uFFFD'))).toBe(true);
    const detokenizer = new IncrementalDetokenizer(qwen);
    const { deltas, text } = stream(
      detokenizer,
      ids.map((id) => [id]),
    );
    expect(text).toBe(' 🤖 机器学习');
    // The emoji spans several ids; it arrives whole in one delta, and no delta carries a replacement character.
    expect(deltas.some((delta) => delta.includes('🤖'))).toBe(true);
    for (const delta of deltas) expect(delta).not.toContain('\uFFFD');
  });
});
