import type { BaseMessage } from '@langchain/core/messages';
import { invalidArgument } from '@trtllm/sdk/transport';
import type { ChatMessage, ChatToolCall } from '@trtllm/tokenizers';

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

/** An AI message's `tool_calls` as the template writes them back: arguments as JSON text. */
function toolCallsOf(value: unknown, field: string): ChatToolCall[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.map((c: unknown, j) => {
    const call = c as { id?: unknown; name?: unknown; args?: unknown } | null;
    if (
      call === null ||
      typeof call !== 'object' ||
      typeof call.name !== 'string' ||
      call.name.length === 0
    ) {
      throw invalidArgument(`${field}[${j}]`, c, 'must be a tool call { name, args, id }');
    }
    return {
      id: typeof call.id === 'string' ? call.id : '',
      name: call.name,
      arguments: JSON.stringify(call.args ?? {}),
    };
  });
}

/**
 * LangChain messages as the role-and-text list a chat template renders, with an AI message's
 * `tool_calls` and a ToolMessage's `tool_call_id`. Non-text content is refused by name rather
 * than dropped, since dropping it would change the prompt without telling anyone.
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
    const toolCalls =
      role === 'assistant'
        ? toolCallsOf((message as unknown as { tool_calls?: unknown }).tool_calls, `${field}.tool_calls`)
        : undefined;
    const toolCallId = (message as unknown as { tool_call_id?: unknown }).tool_call_id;
    const name = message.name;
    return {
      role,
      content: contentText(message.content, `${field}.content`),
      ...(typeof name === 'string' && name.length > 0 ? { name } : {}),
      ...(toolCalls !== undefined ? { toolCalls } : {}),
      ...(role === 'tool' && typeof toolCallId === 'string' ? { toolCallId } : {}),
    };
  });
}
