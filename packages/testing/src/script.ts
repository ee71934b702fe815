/**
 * Scripted output (GENERATOR.md "Scripted output"): a marker in the prompt that makes both test
 * servers generate an exact text. It travels in the prompt so that every client and every model
 * (including the raw one, through its token ids) carries it unchanged.
 */

const MARKER = /\[\[fake-script:([A-Za-z0-9_-]*)={0,2}\]\]/g;
const utf8 = new TextDecoder('utf-8');

/**
 * The prompt marker that makes the fake Triton (and the real Triton's Python stand-ins) answer with
 * exactly `text` instead of the corpus: `[[fake-script:<base64url of the UTF-8 text>]]`. Put it
 * anywhere in a prompt (a system or user message works through chat templates); the last marker of a
 * prompt wins, so each turn of a conversation can script its own answer. The output is
 * `encode(text)` cut at the request's max tokens (finish `length`), else finish `stop`.
 */
export function fakeScript(text: string): string {
  // Called from plain JavaScript too: a number or undefined would otherwise script its String() form.
  if (typeof text !== 'string')
    throw new TypeError(`fakeScript(text): text must be a string, got ${typeof text}`);
  return `[[fake-script:${Buffer.from(text, 'utf8').toString('base64url')}]]`;
}

/**
 * The text the last well-formed marker of `prompt` scripts, or undefined when it has none. A payload
 * whose unpadded length is 1 mod 4 cannot be base64url and does not count as a marker; the bytes are
 * read as UTF-8 with U+FFFD for invalid sequences, as the servers read them.
 */
export function parseFakeScript(prompt: string): string | undefined {
  let last: string | undefined;
  for (const match of prompt.matchAll(MARKER)) {
    const payload = match[1] ?? '';
    if (payload.length % 4 !== 1) last = payload;
  }
  if (last === undefined) return undefined;
  return utf8.decode(Buffer.from(last, 'base64url'));
}
