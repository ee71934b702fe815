import { invalidArgument } from '@trtllm/sdk';
import type { ChatMessage } from '@trtllm/tokenizers';

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** Text of a message's content: a string, or a list of parts of which only text parts are supported. */
function contentText(value: unknown, field: string): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (!Array.isArray(value))
    throw invalidArgument(field, value, 'must be a string or an array of content parts');
  return value
    .map((part: unknown, j) => {
      const p = part as { type?: unknown; text?: unknown } | null;
      if (p === null || typeof p !== 'object' || p.type !== 'text' || typeof p.text !== 'string') {
        throw invalidArgument(
          `${field}[${j}]`,
          part,
          'only text parts ({ "type": "text", "text": ... }) are supported',
        );
      }
      return p.text;
    })
    .join('');
}

/**
 * Checks `messages` and flattens each into role and text for the chat template. `developer` is
 * OpenAI's newer name for `system`, and templates only know the older one.
 */
export function chatMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw invalidArgument('messages', value, 'must be a non-empty array of messages');
  }
  return value.map((m: unknown, i) => {
    const field = `messages[${i}]`;
    if (m === null || typeof m !== 'object' || Array.isArray(m))
      throw invalidArgument(field, m, 'must be an object');
    const message = m as Record<string, unknown>;
    const role = message.role;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw invalidArgument(`${field}.role`, role, `must be one of ${[...ROLES].join(', ')}`);
    }
    const calls = message.tool_calls;
    if (Array.isArray(calls) && calls.length > 0) {
      throw invalidArgument(`${field}.tool_calls`, calls, 'tool calls are not supported');
    }
    const name = message.name;
    if (name !== undefined && name !== null && typeof name !== 'string') {
      throw invalidArgument(`${field}.name`, name, 'must be a string');
    }
    return {
      role: role === 'developer' ? 'system' : role,
      content: contentText(message.content, `${field}.content`),
      ...(typeof name === 'string' ? { name } : {}),
    };
  });
}
