import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import type { ChatMessage } from '@trtllm/tokenizers';
import { loadChatTemplate } from '@trtllm/tokenizers';

/**
 * What the fake generates for `prompt` (GENERATOR.md), as text; the first sequence unless `k` says.
 * A text cut by `maxTokens` inside a character loses the remnant (U+FFFD), as the SDK drops it.
 */
export function generatedText(
  prompt: string,
  options: { readonly maxTokens: number; readonly seed?: number; readonly beamWidth?: number },
  k = 0,
): string {
  const { tokens } = generateTokens(fakeTokenizer.encode(prompt), options)[k]!;
  const text = fakeTokenizer.decode(tokens);
  return tokens.length === options.maxTokens ? text.replace(/\uFFFD$/u, '') : text;
}

/** The decode of what the fake generates, whole: for sequences whose cut nobody reports (BLS beams). */
export function decodedText(
  prompt: string,
  options: { readonly maxTokens: number; readonly beamWidth?: number },
  k: number,
): string {
  return fakeTokenizer.decode(generateTokens(fakeTokenizer.encode(prompt), options)[k]!.tokens);
}

/** The prompt ChatML renders for `messages`: what the model under test must send. */
export async function chatmlPrompt(messages: readonly ChatMessage[]): Promise<string> {
  return (await loadChatTemplate({ choice: 'chatml' })).render(messages);
}
