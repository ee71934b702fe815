import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stableLength, stableLengthByPattern, TextDeltaDecoder } from '../src/text/text-delta.js';

const utf8 = new TextEncoder();
// What Triton's postprocessing does with bytes that do not form whole characters: WHATWG / errors="replace".
const decodeBytes = (bytes: Uint8Array): string =>
  new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);

const piece = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x4e00, max: 0x9fa5 }).map((c) => String.fromCodePoint(c)),
  fc.integer({ min: 0x1f300, max: 0x1f64f }).map((c) => String.fromCodePoint(c)),
  fc.constantFrom(' ', '\n', '\t', '👨‍👩‍👧', 'é', ' .', "n't"),
);
const mixedText = fc.array(piece, { maxLength: 40 }).map((p) => p.join(''));

/** Byte offsets at which a server's tokens end: sorted, distinct, the last one the end of the text. */
function tokenEnds(length: number, cuts: readonly number[]): number[] {
  return [...new Set([...cuts.map((c) => c % (length + 1)), length])].sort((a, b) => a - b);
}

function run(decoder: TextDeltaDecoder, texts: readonly string[]): string[] {
  const deltas = texts.map((text) => decoder.push(text));
  deltas.push(decoder.flush());
  return deltas;
}

describe('TextDeltaDecoder in cumulative mode', () => {
  it('turns cumulative texts cut at any byte into deltas that add up to the text, never showing U+FFFD', () => {
    fc.assert(
      fc.property(mixedText, fc.array(fc.nat(), { maxLength: 20 }), (text, cuts) => {
        const bytes = utf8.encode(text);
        const cumulative = tokenEnds(bytes.length, cuts).map((end) => decodeBytes(bytes.subarray(0, end)));
        const decoder = new TextDeltaDecoder({ mode: 'cumulative' });
        const deltas = run(decoder, cumulative);
        expect(deltas.join('')).toBe(text);
        expect(decoder.text).toBe(text);
        for (const delta of deltas) expect(delta).not.toContain('\uFFFD');
        expect(decoder.lossy).toBe(false);
        expect(decoder.diverged).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('adds up to the final text for any bytes, and reports U+FFFD the server really sent as lossy', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 30 }), fc.array(fc.nat(), { maxLength: 10 }), (bytes, cuts) => {
        const cumulative = tokenEnds(bytes.length, cuts).map((end) => decodeBytes(bytes.subarray(0, end)));
        const decoder = new TextDeltaDecoder('cumulative');
        const full = decodeBytes(bytes);
        expect(run(decoder, cumulative).join('')).toBe(full);
        expect(decoder.lossy).toBe(full.includes('\uFFFD'));
      }),
      { numRuns: 1000 },
    );
  });

  it('holds back a trailing space that a later response may clean up', () => {
    const decoder = new TextDeltaDecoder({ mode: 'cumulative' });
    expect(run(decoder, ['Hello ', 'Hello, world', 'Hello, world '])).toEqual(['Hello', ', world', '', ' ']);
  });

  it('keeps emitted text when a response rewrites it, emitting the new text from the first difference', () => {
    const decoder = new TextDeltaDecoder({ mode: 'cumulative' });
    expect(run(decoder, ['abc', 'abXdef', 'abXdefg'])).toEqual(['abc', 'Xdef', 'g', '']);
    expect(decoder.diverged).toBe(true);
    expect(decoder.text).toBe('abcXdefg');
  });

  it('still emits the held-back tail when the last response carries an empty text (a BLS final)', () => {
    const decoder = new TextDeltaDecoder({ mode: 'cumulative' });
    expect(run(decoder, ['Hello', 'Hello world ', ''])).toEqual(['Hello', ' world', '', ' ']);
    expect(decoder.text).toBe('Hello world ');
  });

  it('repeats nothing when a response is shorter than what was already shown', () => {
    const decoder = new TextDeltaDecoder({ mode: 'cumulative' });
    expect(run(decoder, ['abc', 'ab', 'abcd'])).toEqual(['abc', '', 'd', '']);
    expect(decoder.diverged).toBe(false);
  });
});

describe('TextDeltaDecoder in delta mode', () => {
  it('passes per-token text through and flags it lossy once a split character arrived as U+FFFD', () => {
    fc.assert(
      fc.property(mixedText, fc.array(fc.nat(), { maxLength: 20 }), (text, cuts) => {
        const bytes = utf8.encode(text);
        const ends = tokenEnds(bytes.length, cuts);
        const perToken = ends.map((end, i) => decodeBytes(bytes.subarray(i === 0 ? 0 : ends[i - 1], end)));
        const decoder = new TextDeltaDecoder({ mode: 'delta' });
        const deltas = run(decoder, perToken);
        expect(deltas.slice(0, -1)).toEqual(perToken);
        expect(deltas.at(-1)).toBe('');
        expect(decoder.lossy).toBe(perToken.join('').includes('\uFFFD'));
      }),
      { numRuns: 500 },
    );
  });
});

it('rejects an unknown mode with invalid_argument', () => {
  expect(() => new TextDeltaDecoder({ mode: 'overwrite' as 'delta' })).toThrowError(
    expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining('mode') }),
  );
});

describe('stableLength', () => {
  // Texts built from the characters the rule is about, so that every kind of tail comes up often.
  const tailish = fc
    .array(fc.constantFrom('a', 'n', 'v', 'r', "'", ' ', '\uFFFD', '.', 'é'), { maxLength: 12 })
    .map((cs) => cs.join(''));

  it('scanning back from the end agrees with the rule as a regular expression', () => {
    fc.assert(
      fc.property(fc.string(), tailish, (head, tail) => {
        const text = head + tail;
        expect(stableLength(text)).toBe(stableLengthByPattern(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('holds back each kind of tail', () => {
    expect(stableLength('Hello \uFFFD\uFFFD')).toBe(6);
    expect(stableLength('I do  n')).toBe(4);
    expect(stableLength("it  'v")).toBe(2);
    expect(stableLength("x'")).toBe(1);
    expect(stableLength('done.')).toBe(5);
  });
});

describe('a cumulative stream', () => {
  it('adds up exactly over 20,000 growing texts (each push compares only a window of what came before)', () => {
    const decoder = new TextDeltaDecoder('cumulative');
    let text = '';
    let out = '';
    for (let i = 0; i < 20_000; i++) {
      text += `w${i} `;
      out += decoder.push(text);
    }
    out += decoder.flush();
    expect(out).toBe(text);
    expect(decoder.diverged).toBe(false);
  });
});
