import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StopSequenceMatcher } from '../src/text/stop-sequences.js';

/** The non-streaming answer: text before the earliest stop, the longest stop winning a tie. */
function cutAtStop(text: string, stops: readonly string[]): { text: string; matched?: string } {
  let best: { index: number; stop: string } | undefined;
  for (const stop of stops) {
    const index = text.indexOf(stop);
    if (
      index >= 0 &&
      (best === undefined || index < best.index || (index === best.index && stop.length > best.stop.length))
    ) {
      best = { index, stop };
    }
  }
  return best === undefined ? { text } : { text: text.slice(0, best.index), matched: best.stop };
}

function streamChunks(
  matcher: StopSequenceMatcher,
  chunks: readonly string[],
): { text: string; matched?: string } {
  let text = '';
  let matched: string | undefined;
  for (const piece of chunks) {
    const step = matcher.push(piece);
    text += step.emit;
    if (step.matched !== undefined) {
      expect(matched).toBeUndefined();
      matched = step.matched;
    }
  }
  text += matcher.flush();
  expect(matcher.matched).toBe(matched ?? matcher.matched);
  return matcher.matched === undefined ? { text } : { text, matched: matcher.matched };
}

/** Splits `text` at the given cut points (in code points, so no surrogate pair is torn). */
function splitAt(text: string, cuts: readonly number[]): string[] {
  const chars = [...text];
  const points = [...new Set(cuts.map((c) => c % (chars.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const point of points) {
    pieces.push(chars.slice(from, point).join(''));
    from = point;
  }
  pieces.push(chars.slice(from).join(''));
  return pieces;
}

const smallText = fc
  .array(fc.constantFrom('a', 'b', ' ', '\n', '机', '🤖'), { maxLength: 30 })
  .map((c) => c.join(''));
const smallStop = fc
  .array(fc.constantFrom('a', 'b', ' ', '\n', '机', '🤖'), { minLength: 1, maxLength: 4 })
  .map((c) => c.join(''));

describe('StopSequenceMatcher', () => {
  it('cuts streamed text exactly where the whole text is cut, for any chunking', () => {
    fc.assert(
      fc.property(
        smallText,
        fc.array(smallStop, { maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (text, stops, cuts) => {
          const streamed = streamChunks(new StopSequenceMatcher(stops), splitAt(text, cuts));
          expect(streamed).toEqual(cutAtStop(text, stops));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('catches a stop that spans chunks and reports it', () => {
    const matcher = new StopSequenceMatcher(['o w', 'xyz']);
    expect(matcher.push('Hel')).toEqual({ emit: 'Hel' });
    expect(matcher.push('lo')).toEqual({ emit: 'l' });
    expect(matcher.push(' ')).toEqual({ emit: '' });
    expect(matcher.push('world')).toEqual({ emit: '', matched: 'o w' });
    expect(matcher.push(' and more')).toEqual({ emit: '' });
    expect(matcher.flush()).toBe('');
    expect(matcher.matched).toBe('o w');
  });

  it('waits for a longer stop that starts earlier than a shorter one already complete', () => {
    const matcher = new StopSequenceMatcher(['abcd', 'bc']);
    expect(matcher.push('xabc')).toEqual({ emit: 'x' });
    expect(matcher.push('d')).toEqual({ emit: '', matched: 'abcd' });
  });

  it('finds a stop held back at the end of the stream on flush', () => {
    const matcher = new StopSequenceMatcher(['abcd', 'bc']);
    expect(matcher.push('xabc')).toEqual({ emit: 'x' });
    expect(matcher.flush()).toBe('a');
    expect(matcher.matched).toBe('bc');
  });

  it('releases held text that never became a stop', () => {
    const matcher = new StopSequenceMatcher(['</s>']);
    expect(matcher.push('a </')).toEqual({ emit: 'a ' });
    expect(matcher.push('b')).toEqual({ emit: '</b' });
    expect(matcher.push('<')).toEqual({ emit: '' });
    expect(matcher.flush()).toBe('<');
    expect(matcher.matched).toBeUndefined();
  });

  it('rejects an empty stop sequence with invalid_argument', () => {
    expect(() => new StopSequenceMatcher(['ok', ''])).toThrowError(
      expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining('stop') }),
    );
  });
});
