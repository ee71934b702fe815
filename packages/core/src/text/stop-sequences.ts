import { invalidArgument } from '../errors.js';

/** What one `push` lets through: `emit` is safe to show; `matched` is set once a stop sequence ended the text. */
export interface StopSequenceStep {
  readonly emit: string;
  readonly matched?: string;
}

interface Match {
  readonly index: number;
  readonly stop: string;
}

/**
 * Cuts streamed text at the first stop sequence, however the text is split into chunks.
 *
 * Servers match stop words on token ids, which misses a word that tokenizes differently in context, and they
 * leave the stop word in the output; this matcher is the client-side backstop. It holds back the shortest tail
 * that could still grow into a stop sequence (at most the longest stop's length minus one), so a stop that spans
 * chunks is caught, and emits the text before the stop without the stop itself. The streamed result always
 * equals the non-streaming one: the text up to the earliest occurrence of any stop, the longest stop winning a
 * tie. After a match every further push emits nothing.
 */
export class StopSequenceMatcher {
  readonly stops: readonly string[];
  readonly #longest: number;
  #held = '';
  #matched: string | undefined;

  constructor(stops: readonly string[]) {
    if (!Array.isArray(stops)) throw invalidArgument('stop', stops, 'must be an array of strings');
    for (const stop of stops) {
      if (typeof stop !== 'string' || stop.length === 0) {
        throw invalidArgument('stop', stops, 'every stop sequence must be a non-empty string');
      }
    }
    this.stops = [...new Set(stops)];
    this.#longest = Math.max(0, ...this.stops.map((stop) => stop.length));
  }

  /** The stop sequence that ended the text, once one has. */
  get matched(): string | undefined {
    return this.#matched;
  }

  /** Takes the next chunk of text and returns what is safe to show. */
  push(text: string): StopSequenceStep {
    if (typeof text !== 'string') throw invalidArgument('text', text, 'must be a string');
    if (this.#matched !== undefined) return { emit: '' };
    const buffer = this.#held + text;
    const match = this.#firstMatch(buffer);
    const pending = this.#firstPending(buffer, match?.index ?? buffer.length);
    if (pending !== undefined) {
      // A stop that starts here could still complete, and it would start no later than any match found so far.
      this.#held = buffer.slice(pending);
      return { emit: buffer.slice(0, pending) };
    }
    this.#held = '';
    if (match === undefined) return { emit: buffer };
    this.#matched = match.stop;
    return { emit: buffer.slice(0, match.index), matched: match.stop };
  }

  /** Ends the stream: returns the held tail, cut at a stop it contains (then `matched` is set). */
  flush(): string {
    if (this.#matched !== undefined) return '';
    const buffer = this.#held;
    this.#held = '';
    const match = this.#firstMatch(buffer);
    if (match === undefined) return buffer;
    this.#matched = match.stop;
    return buffer.slice(0, match.index);
  }

  /** The earliest complete stop in `text`, the longest one when several start at the same place. */
  #firstMatch(text: string): Match | undefined {
    let best: Match | undefined;
    for (const stop of this.stops) {
      const index = text.indexOf(stop);
      if (index < 0) continue;
      if (
        best === undefined ||
        index < best.index ||
        (index === best.index && stop.length > best.stop.length)
      ) {
        best = { index, stop };
      }
    }
    return best;
  }

  /** The earliest start, at or before `limit`, of a tail of `text` that is a proper prefix of some stop. */
  #firstPending(text: string, limit: number): number | undefined {
    const last = Math.min(limit, text.length - 1);
    for (let start = Math.max(0, text.length - this.#longest + 1); start <= last; start++) {
      const tail = text.slice(start);
      if (this.stops.some((stop) => stop.length > tail.length && stop.startsWith(tail))) return start;
    }
    return undefined;
  }
}
