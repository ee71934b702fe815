import { invalidArgument } from '@trtllm/sdk/transport';
import type { ChatMessage, ChatToolCall } from '@trtllm/tokenizers';

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

/** One entry of an assistant message's `tool_calls`: `{ id, type: "function", function: { name, arguments } }`. */
function toolCallOf(value: unknown, field: string): ChatToolCall {
  const call = value as { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } };
  if (call === null || typeof call !== 'object' || Array.isArray(call))
    throw invalidArgument(field, value, 'must be a tool call object');
  if (call.type !== undefined && call.type !== 'function')
    throw invalidArgument(`${field}.type`, call.type, 'must be "function"');
  if (typeof call.id !== 'string') throw invalidArgument(`${field}.id`, call.id, 'must be a string');
  const fn = call.function;
  if (fn === null || typeof fn !== 'object')
    throw invalidArgument(`${field}.function`, fn, 'must be { "name": ..., "arguments": ... }');
  if (typeof fn.name !== 'string' || fn.name.length === 0)
    throw invalidArgument(`${field}.function.name`, fn.name, 'must be a non-empty string');
  if (typeof fn.arguments !== 'string')
    throw invalidArgument(`${field}.function.arguments`, fn.arguments, 'must be a string of JSON');
  return { id: call.id, name: fn.name, arguments: fn.arguments };
}

function toolCallsOf(value: unknown, role: string, field: string): ChatToolCall[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidArgument(field, value, 'must be an array of tool calls');
  if (value.length === 0) return undefined;
  if (role !== 'assistant') throw invalidArgument(field, value, 'only assistant messages carry tool calls');
  return value.map((c: unknown, j) => toolCallOf(c, `${field}[${j}]`));
}

/**
 * Checks `messages` and flattens each into role and text for the chat template, keeping an
 * assistant's `tool_calls` and a tool result's `tool_call_id`. `developer` is OpenAI's newer name
 * for `system`, and templates only know the older one.
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
    const toolCalls = toolCallsOf(message.tool_calls, role, `${field}.tool_calls`);
    const toolCallId = message.tool_call_id;
    if (toolCallId !== undefined && toolCallId !== null && typeof toolCallId !== 'string') {
      throw invalidArgument(`${field}.tool_call_id`, toolCallId, 'must be a string');
    }
    const name = message.name;
    if (name !== undefined && name !== null && typeof name !== 'string') {
      throw invalidArgument(`${field}.name`, name, 'must be a string');
    }
    return {
      role: role === 'developer' ? 'system' : role,
      content: contentText(message.content, `${field}.content`),
      ...(typeof name === 'string' ? { name } : {}),
      ...(toolCalls !== undefined ? { toolCalls } : {}),
      ...(typeof toolCallId === 'string' ? { toolCallId } : {}),
    };
  });
}
