import {
  CORPUS,
  CORPUS_IDS,
  decode,
  encode,
  generateTokens,
  SENTENCE_STARTS,
  sequenceCount,
  tokenLogProb,
  VOCAB_SIZE,
} from '@trtllm/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const ids = fc.array(fc.integer({ min: 3, max: VOCAB_SIZE - 1 }), { maxLength: 12 });
const word = fc.array(fc.constantFrom(...new Set(CORPUS_IDS)), { minLength: 1, maxLength: 3 });

function endsWith(a: readonly number[], w: readonly number[]): boolean {
  return w.length <= a.length && w.every((t, i) => a[a.length - w.length + i] === t);
}

describe('the vocabulary', () => {
  it('decodes what it encodes, for any text', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => decode(encode(s)) === s));
  });

  it('encodes a word differently in and out of context, like a BPE tokenizer', () => {
    expect(encode(' data')).toEqual([274]);
    expect(encode('data')).toEqual([...Buffer.from('data')].map((b) => b + 3));
  });

  it('decodes a lone piece of a multi-byte character as U+FFFD, the whole character correctly', () => {
    const robot = encode('🤖');
    expect(robot).toHaveLength(4);
    for (const id of robot) expect(decode([id])).toBe('\uFFFD');
    expect(decode(robot)).toBe('🤖');
  });

  it('gives special ids no text', () => {
    expect(decode([0, 1, 2, ...encode('Hi')])).toBe('Hi');
  });
});

describe('the generator', () => {
  it('finds a sentence start at 0 and after every sentence end of the corpus', () => {
    const L = CORPUS_IDS.length;
    expect(SENTENCE_STARTS[0]).toBe(0);
    for (let i = 1; i < L; i++) {
      const endsSentence = /[.。]$/u.test(decode(CORPUS_IDS.slice(0, i)));
      expect(SENTENCE_STARTS.includes(i)).toBe(endsSentence);
    }
    expect(SENTENCE_STARTS.map((i) => decode(CORPUS_IDS.slice(i, i + 1)))).toEqual([
      ' Machine',
      ' ',
      ' Models',
    ]);
  });

  it('walks the corpus from sentence start (sum(input) + seed) mod len(B)', () => {
    fc.assert(
      fc.property(ids, fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (input, seed) => {
        const L = CORPUS_IDS.length;
        const B = SENTENCE_STARTS.length;
        const [seq] = generateTokens(input, { maxTokens: 3, seed });
        const start = SENTENCE_STARTS[Number((BigInt(input.reduce((a, b) => a + b, 0)) + seed) % BigInt(B))]!;
        expect(seq!.tokens).toEqual([0, 1, 2].map((i) => CORPUS_IDS[(start + i) % L]));
      }),
    );
  });

  it('never produces more than max tokens, and stops for length exactly there', () => {
    fc.assert(
      fc.property(ids, fc.integer({ min: 0, max: 400 }), (input, maxTokens) => {
        const [seq] = generateTokens(input, { maxTokens });
        expect(seq!.tokens.length).toBeLessThanOrEqual(maxTokens);
        if (seq!.finishReason === 'length') expect(seq!.tokens).toHaveLength(maxTokens);
      }),
    );
  });

  it('stops before end_id once min_tokens are out, and emits end_id before that', () => {
    fc.assert(
      fc.property(
        ids,
        fc.constantFrom(...CORPUS_IDS),
        fc.integer({ min: 0, max: 20 }),
        (input, endId, minTokens) => {
          const [seq] = generateTokens(input, { maxTokens: 300, endId, minTokens });
          const after = seq!.tokens.slice(minTokens);
          expect(after).not.toContain(endId);
          if (seq!.tokens.length < 300) expect(seq!.finishReason).toBe('stop');
        },
      ),
    );
  });

  it('ends on a stop word and keeps it in the output', () => {
    fc.assert(
      fc.property(ids, fc.array(word, { minLength: 1, maxLength: 3 }), (input, stopWords) => {
        const [seq] = generateTokens(input, { maxTokens: 500, stopWords });
        if (seq!.finishReason === 'stop') expect(stopWords.some((w) => endsWith(seq!.tokens, w))).toBe(true);
        // No earlier prefix ended with a stop word.
        for (let n = 1; n < seq!.tokens.length; n++) {
          expect(stopWords.some((w) => endsWith(seq!.tokens.slice(0, n), w))).toBe(false);
        }
      }),
    );
  });

  it('never lets the output end with a bad word', () => {
    fc.assert(
      fc.property(ids, fc.array(word, { minLength: 1, maxLength: 4 }), (input, badWords) => {
        const [seq] = generateTokens(input, { maxTokens: 60, badWords });
        for (let n = 1; n <= seq!.tokens.length; n++) {
          expect(badWords.some((w) => endsWith(seq!.tokens.slice(0, n), w))).toBe(false);
        }
      }),
    );
  });

  it('gives each beam its own sequence', () => {
    fc.assert(
      fc.property(ids, fc.integer({ min: 2, max: SENTENCE_STARTS.length }), (input, beamWidth) => {
        const seqs = generateTokens(input, { maxTokens: 12, beamWidth, numReturnSequences: 1 });
        expect(seqs).toHaveLength(beamWidth);
        expect(new Set(seqs.map((s) => s.tokens.join())).size).toBe(beamWidth);
      }),
    );
  });

  it('returns num_return_sequences sequences when not beam searching', () => {
    expect(sequenceCount({ numReturnSequences: 3 })).toBe(3);
    expect(sequenceCount({ beamWidth: 2, numReturnSequences: 3 })).toBe(2);
    const seqs = generateTokens([5], { maxTokens: 4, numReturnSequences: 3 });
    expect(seqs.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(seqs[1]!.tokens[0]).toBe(CORPUS_IDS[SENTENCE_STARTS[(5 + 1) % SENTENCE_STARTS.length]!]);
  });

  it('gives log probs -(1 + tok mod 7)/8 only when asked, cum_log_probs their sum', () => {
    fc.assert(
      fc.property(ids, (input) => {
        const [asked] = generateTokens(input, { maxTokens: 9, returnLogProbs: true });
        expect(asked!.logProbs).toEqual(asked!.tokens.map((t) => -(1 + (t % 7)) / 8));
        expect(asked!.cumLogProb).toBeCloseTo(asked!.logProbs.reduce((a, b) => a + b, 0));
        const [plain] = generateTokens(input, { maxTokens: 9 });
        expect(plain!.logProbs.every((p) => p === 0)).toBe(true);
      }),
    );
    expect(tokenLogProb(14)).toBe(-1 / 8);
  });

  it('has a corpus that decodes back to itself', () => {
    expect(decode(CORPUS_IDS)).toBe(CORPUS);
  });
});
