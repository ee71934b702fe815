/** Who takes the whole one-line events found by {@link takeDataLines}. */
export interface DataLineSink {
  /**
   * The data of one event, `bytes[from, to)` (valid only during the call: the read buffer is
   * reused); `escapes` when the read holds a `\u` escape at or before its end.
   */
  onDataLine(bytes: Uint8Array, from: number, to: number, escapes: boolean): void;
}

/**
 * Hands over the whole `data: <text>\n\n` events at the start of `bytes[from, to)`, Triton's way of
 * writing each event, and answers where the rest begins (for the SSE decoder: comments, CR, other
 * fields, an event cut by the read), or -1 when an event's data exceeds `limit`. The searches for
 * CR and `\u` run once per read, not once per event: a read can carry many events.
 */
export function takeDataLines(
  bytes: Uint8Array,
  from: number,
  to: number,
  limit: number | undefined,
  sink: DataLineSink,
): number {
  let at = from;
  // The next CR and `\u` at or after `at` (-1: none before `to`, -2: not looked for yet).
  let cr = -2;
  let unicode = -2;
  while (to - at > 7 && startsWithData(bytes, at)) {
    const lf = bytes.indexOf(10, at + 6);
    if (lf < 0 || lf + 1 >= to || bytes[lf + 1] !== 10) break;
    if (cr !== -1 && cr < at) cr = within(bytes.indexOf(13, at + 6), to);
    if (cr >= 0 && cr < lf) break;
    if (limit !== undefined && lf - at - 6 > limit) return -1;
    if (unicode !== -1 && unicode < at) unicode = unicodeEscape(bytes, at, to);
    sink.onDataLine(bytes, at + 6, lf, unicode >= 0 && unicode < lf);
    at = lf + 2;
  }
  return at;
}

/** A search result, -1 when it lies past `to` (the bytes after it belong to something else). */
function within(index: number, to: number): number {
  return index >= to ? -1 : index;
}

/** Where the first `\u` at or after `at` starts, -1 when none does before `to`. */
function unicodeEscape(bytes: Uint8Array, at: number, to: number): number {
  for (let i = bytes.indexOf(92, at); i >= 0 && i < to; i = bytes.indexOf(92, i + 1)) {
    if (bytes[i + 1] === 117) return i;
  }
  return -1;
}

/** Whether `data: ` starts at `at`. */
function startsWithData(bytes: Uint8Array, at: number): boolean {
  return (
    bytes[at] === 100 &&
    bytes[at + 1] === 97 &&
    bytes[at + 2] === 116 &&
    bytes[at + 3] === 97 &&
    bytes[at + 4] === 58 &&
    bytes[at + 5] === 32
  );
}
