import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IncrementalDetokenizer } from '../src/text/detokenizer.js';
import type { Tokenizer } from '../src/text/tokenizer.js';

// Small tokenizers written out here, each reproducing one decoder behaviour of real Hugging Face tokenizers
// (the real ones are exercised in packages/tokenizers). Each counts the ids it decodes, to check the window stays short.

const EOS = 256;

/** Byte-level BPE in miniature: ids 0..255 are bytes, decoded together as UTF-8 with replacement. */
class ByteTokenizer implements Tokenizer {
  readonly endId = EOS;
  decodedIds = 0;
  encode(text: string): number[] {
    return [...new TextEncoder().encode(text)];
  }
  decode(ids: readonly number[], options: { readonly skipSpecialTokens?: boolean } = {}): string {
    this.decodedIds += ids.length;
    let text = '';
    let bytes: number[] = [];
    const flushBytes = () => {
      text += new TextDecoder('utf-8', { ignoreBOM: true }).decode(Uint8Array.from(bytes));
      bytes = [];
    };
    for (const id of ids) {
      if (id !== EOS) bytes.push(id);
      else if (options.skipSpecialTokens === false) {
        flushBytes();
        text += '</s>';
      }
    }
    flushBytes();
    return text;
  }
}

/**
 * Llama's SentencePiece decoder in miniature: `▁` becomes a space, `<0x..>` byte pieces are fused as UTF-8, and
 * one leading space of the whole text is stripped, which is why a token decoded alone loses its space.
 */
const PIECES = [
  '</s>',
  '▁Hello',
  '▁world',
  '▁',
  'a',
  '▁a',
  '机',
  '<0xE6>',
  '<0x9C>',
  '<0xBA>',
  '<0xF0>',
  '\n',
  '.',
];
class SentencePieceTokenizer implements Tokenizer {
  readonly endId = 0;
  encode(): number[] {
    throw new Error('not needed by these tests');
  }
  decode(ids: readonly number[], options: { readonly skipSpecialTokens?: boolean } = {}): string {
    let text = '';
    let bytes: number[] = [];
    const flushBytes = () => {
      text += new TextDecoder().decode(Uint8Array.from(bytes));
      bytes = [];
    };
    for (const id of ids) {
      const piece = PIECES[id]!;
      const byte = /^<0x([0-9A-F]{2})>$/.exec(piece);
      if (byte !== null) {
        bytes.push(Number.parseInt(byte[1]!, 16));
        continue;
      }
      flushBytes();
      if (id === 0 && options.skipSpecialTokens !== false) continue;
      text += piece.replaceAll('▁', ' ');
    }
    flushBytes();
    return text.startsWith(' ') ? text.slice(1) : text;
  }
}

/** A word-level decoder with transformers' `clean_up_tokenization_spaces`, which rewrites " ." to "." and so on. */
const WORDS = [
  ' ',
  '.',
  ',',
  '?',
  "'",
  'n',
  "'t",
  's',
  'a',
  ' a',
  'x',
  've',
  're',
  'm',
  '!',
  ' n',
  " '",
  "'s",
  ' .',
  '  ',
];
class CleanUpTokenizer implements Tokenizer {
  encode(): number[] {
    throw new Error('not needed by these tests');
  }
  decode(ids: readonly number[]): string {
    return ids
      .map((id) => WORDS[id]!)
      .join('')
      .replace(/ \./g, '.')
      .replace(/ \?/g, '?')
      .replace(/ !/g, '!')
      .replace(/ ,/g, ',')
      .replace(/ ' /g, "'")
      .replace(/ n't/g, "n't")
      .replace(/ 'm/g, "'m")
      .replace(/ 's/g, "'s")
      .replace(/ 've/g, "'ve")
      .replace(/ 're/g, "'re");
  }
}

function stream(detokenizer: IncrementalDetokenizer, chunks: readonly (readonly number[])[]): string[] {
  const deltas = chunks.map((ids) => detokenizer.push(ids));
  deltas.push(detokenizer.flush());
  return deltas;
}

/** Ids in chunks whose sizes cycle through `sizes`. */
function chunked(ids: readonly number[], sizes: readonly number[]): number[][] {
  const chunks: number[][] = [];
  for (let at = 0, i = 0; at < ids.length; i++) {
    const size = sizes[i % Math.max(1, sizes.length)] ?? 1;
    chunks.push(ids.slice(at, at + size));
    at += size;
  }
  return chunks;
}

const sizes = fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 6 });

describe('IncrementalDetokenizer', () => {
  it.each([
    ['byte-level', new ByteTokenizer(), fc.integer({ min: 0, max: 256 })],
    ['SentencePiece', new SentencePieceTokenizer(), fc.integer({ min: 0, max: PIECES.length - 1 })],
    ['clean-up', new CleanUpTokenizer(), fc.integer({ min: 0, max: WORDS.length - 1 })],
  ] as const)(
    'streams any id sequence of a %s tokenizer exactly as its full decode',
    (_name, tokenizer, id) => {
      fc.assert(
        fc.property(
          fc.array(id, { maxLength: 40 }),
          sizes,
          fc.boolean(),
          (ids, chunkSizes, skipSpecialTokens) => {
            const detokenizer = new IncrementalDetokenizer(tokenizer, { skipSpecialTokens });
            const deltas = stream(detokenizer, chunked(ids, chunkSizes));
            const full = tokenizer.decode(ids, { skipSpecialTokens });
            expect(deltas.join('')).toBe(full);
            expect(detokenizer.text).toBe(full);
            // Every delta is a settled piece of the final text: the text shown so far is always a prefix of it.
            let shown = '';
            for (const delta of deltas) {
              shown += delta;
              expect(full.startsWith(shown)).toBe(true);
            }
          },
        ),
        { numRuns: 3000 },
      );
    },
  );

  it('shows no U+FFFD for text whose characters are split across byte tokens', () => {
    const tokenizer = new ByteTokenizer();
    fc.assert(
      // A text holding U+FFFD itself would rightly stream it: the property is about split characters.
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 20 }).filter((t) => !t.includes('\uFFFD')),
        sizes,
        (text, chunkSizes) => {
          const deltas = stream(
            new IncrementalDetokenizer(tokenizer),
            chunked(tokenizer.encode(text), chunkSizes),
          );
          expect(deltas.join('')).toBe(text);
          for (const delta of deltas) expect(delta).not.toContain('\uFFFD');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('gives the first token the leading space it has after the prompt', () => {
    const tokenizer = new SentencePieceTokenizer();
    const prompt = [1, 5]; // "Hello a"
    const alone = new IncrementalDetokenizer(tokenizer);
    expect(stream(alone, [[2], [5]]).join('')).toBe('world a');
    const afterPrompt = new IncrementalDetokenizer(tokenizer, { prefixIds: prompt });
    expect(stream(afterPrompt, [[2], [5]])).toEqual([' world', ' a', '']);
  });

  it('emits a character split over byte pieces once, when its last byte arrives', () => {
    const tokenizer = new SentencePieceTokenizer();
    const detokenizer = new IncrementalDetokenizer(tokenizer);
    // The space is held too, until the next piece shows it is not one that clean-up would remove.
    expect(stream(detokenizer, [[1], [3], [7], [8], [9], [2]])).toEqual([
      'Hello',
      '',
      ' ',
      '',
      '机',
      ' world',
      '',
    ]);
  });

  it('decodes a window of recent ids, not the whole sequence, for each push', () => {
    const tokenizer = new ByteTokenizer();
    const detokenizer = new IncrementalDetokenizer(tokenizer);
    const ids = tokenizer.encode('streaming text one token at a time '.repeat(60));
    for (const id of ids) detokenizer.push([id]);
    expect(detokenizer.flush()).toBe(' ');
    expect(detokenizer.text.length).toBe(ids.length);
    // Each push decodes the previous chunk and the new one, twice: a handful of ids, however long the text.
    expect(tokenizer.decodedIds).toBeLessThan(ids.length * 6);
  });

  it('rejects ids that are not non-negative integers with invalid_argument', () => {
    const detokenizer = new IncrementalDetokenizer(new ByteTokenizer());
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(() => detokenizer.push([65, bad])).toThrowError(
        expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining('ids') }),
      );
    }
    expect(() => new IncrementalDetokenizer(new ByteTokenizer(), { prefixIds: [-3] })).toThrowError(
      expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining('prefixIds') }),
    );
  });
});
