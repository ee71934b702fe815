import { exactMatch, rougeL, scoreAccuracy } from '@trtllm/bench';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const words = fc.array(fc.constantFrom('the', 'cat', 'sat', 'on', 'a', 'mat', 'dog', 'ran'), {
  minLength: 1,
  maxLength: 12,
});

describe('accuracy metrics', () => {
  it('matches exactly up to surrounding whitespace', () => {
    expect(exactMatch(' Machine learning\n', 'Machine learning')).toBe(true);
    expect(exactMatch('Machine learning', 'machine learning')).toBe(false);
  });

  it('scores ROUGE-L as the F1 of the longest common word subsequence', () => {
    // LCS "the cat on the mat" is 5 words: recall 5/5, precision 5/6, F1 10/11.
    expect(rougeL('the cat sat on the mat', 'the cat on the mat')).toBeCloseTo(10 / 11, 10);
    expect(rougeL('The Cat', 'the cat')).toBe(1);
    expect(rougeL('dog ran', 'the cat')).toBe(0);
  });

  it('scores an empty output 0, and two empty texts 1', () => {
    expect(rougeL('', 'the cat')).toBe(0);
    expect(rougeL('the cat', '  ')).toBe(0);
    expect(rougeL('', '')).toBe(1);
  });

  it('stays within 0..1, is 1 for identical text and symmetric for one sentence', () => {
    fc.assert(
      fc.property(words, words, (a, b) => {
        const x = a.join(' ');
        const y = b.join(' ');
        const score = rougeL(x, y);
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(1);
        expect(rougeL(x, x)).toBe(1);
        expect(rougeL(y, x)).toBeCloseTo(score, 12);
      }),
    );
  });

  it('averages over the scored pairs', () => {
    const report = scoreAccuracy([
      { output: 'the cat', expected: 'the cat' },
      { output: 'dog', expected: 'the cat' },
    ]);
    expect(report).toEqual({ scored: 2, exactMatch: 0.5, rougeL: 0.5 });
    expect(scoreAccuracy([])).toBeUndefined();
  });
});
