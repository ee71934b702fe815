import type { BaseMessage } from '@langchain/core/messages';
import { invalidArgument } from '@trtllm/sdk';
import type { ChatMessage } from '@trtllm/tokenizers';

/** LangChain's message types and the chat-template roles they become. */
const ROLE_OF_TYPE: Readonly<Record<string, string>> = {
  human: 'user',
  ai: 'assistant',
  system: 'system',
  // OpenAI's newer name for system; chat templates only know the older one.
  developer: 'system',
  tool: 'tool',
};

const GENERIC_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** Text of a message's content: a string, or content blocks of which only text blocks are supported. */
function contentText(content: unknown, field: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidArgument(field, content, 'must be a string or content blocks');
  return content
    .map((block: unknown, j) => {
      const b = block as { type?: unknown; text?: unknown } | null;
      if (b === null || typeof b !== 'object' || b.type !== 'text' || typeof b.text !== 'string') {
        throw invalidArgument(
          `${field}[${j}]`,
          typeof b === 'object' && b !== null ? (b.type ?? b) : b,
          'only text content blocks are supported (the model takes text through its chat template)',
        );
      }
      return b.text;
    })
    .join('');
}

/**
 * LangChain messages as the role-and-text list a chat template renders. Tool calls and non-text
 * content are refused by name rather than dropped, since dropping them would change the prompt
 * without telling anyone.
 */
export function chatMessagesOf(messages: readonly BaseMessage[]): ChatMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalidArgument('messages', messages, 'must be a non-empty list of messages');
  }
  return messages.map((message, i) => {
    const field = `messages[${i}]`;
    const type = message.getType();
    let role = ROLE_OF_TYPE[type];
    if (type === 'generic') {
      const generic = (message as unknown as { role?: unknown }).role;
      if (typeof generic !== 'string' || !GENERIC_ROLES.has(generic)) {
        throw invalidArgument(`${field}.role`, generic, `must be one of ${[...GENERIC_ROLES].join(', ')}`);
      }
      role = generic === 'developer' ? 'system' : generic;
    }
    if (role === undefined) {
      throw invalidArgument(`${field}.type`, type, 'must be a human, ai, system, tool or chat message');
    }
    const calls = (message as unknown as { tool_calls?: unknown }).tool_calls;
    if (Array.isArray(calls) && calls.length > 0) {
      throw invalidArgument(`${field}.tool_calls`, calls, 'tool calls are not supported');
    }
    const name = message.name;
    return {
      role,
      content: contentText(message.content, `${field}.content`),
      ...(typeof name === 'string' && name.length > 0 ? { name } : {}),
    };
  });
}
