import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import type { ChatMessage } from '@trtllm/tokenizers';
import { loadChatTemplate } from '@trtllm/tokenizers';

/** What the fake generates for `prompt` (GENERATOR.md), as text; the first sequence unless `k` says. */
export function generatedText(
  prompt: string,
  options: { readonly maxTokens: number; readonly seed?: number; readonly beamWidth?: number },
  k = 0,
): string {
  const sequences = generateTokens(fakeTokenizer.encode(prompt), options);
  return fakeTokenizer.decode(sequences[k]!.tokens);
}

/** The prompt ChatML renders for `messages`: what the model under test must send. */
export async function chatmlPrompt(messages: readonly ChatMessage[]): Promise<string> {
  return (await loadChatTemplate({ choice: 'chatml' })).render(messages);
}
