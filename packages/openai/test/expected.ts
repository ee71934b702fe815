import { CORPUS_IDS, decode, encode, type GenerateOptions, generateTokens } from '@trtllm/testing';

/** What the documented generator produces for a text prompt (the fake's preprocessing encodes it). */
export function generated(prompt: string, options: GenerateOptions) {
  return generateTokens(encode(prompt), options).map((s) => ({ ...s, text: decode(s.tokens) }));
}

/**
 * OpenAI's text of a generation cut by `max_tokens` inside a character: without the U+FFFD that
 * decoding gives the character's first bytes (issue 53; OpenAI and vLLM drop that remnant too).
 */
export function cutAtLength(text: string): string {
  return text.endsWith('\uFFFD') ? text.slice(0, -1) : text;
}

/** OpenAI's stop semantics: the text up to (not including) the first stop string. */
export function cutAtStop(text: string, stops: readonly string[]): { text: string; stopped: boolean } {
  let cut = -1;
  for (const s of stops) {
    const at = text.indexOf(s);
    if (at >= 0 && (cut < 0 || at < cut)) cut = at;
  }
  return cut < 0 ? { text, stopped: false } : { text: text.slice(0, cut), stopped: true };
}

/**
 * The first seed for which `accept` holds on sequence 0's text, so a test can ask for an output with
 * the property it needs (plain ASCII, containing a stop string) instead of trusting a magic number.
 */
export function seedWhere(prompt: string, maxTokens: number, accept: (text: string) => boolean): number {
  for (let seed = 0; seed < CORPUS_IDS.length; seed++) {
    if (accept(generated(prompt, { maxTokens, seed })[0]!.text)) return seed;
  }
  throw new Error(`no seed gives an output that fits for ${JSON.stringify(prompt)}`);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII range check
export const isAscii = (text: string): boolean => /^[\x00-\x7f]*$/.test(text);
