import type { ImageInput } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import type { ChatContentPart, ChatMessage, ChatToolCall } from '@trtllm/tokenizers';

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** The chat messages for the template, and the images of their `image_url` parts in order. */
export interface ChatInput {
  readonly messages: ChatMessage[];
  readonly images: ImageInput[];
  /** Where each image was sent (`messages[0].content[1]`), for errors about it. */
  readonly imageFields: string[];
}

const DETAILS = new Set(['auto', 'low', 'high']);

/**
 * An `image_url` part's image, as OpenAI's vision API takes it: an http(s) URL, which Triton's
 * model fetches, or a `data:` URL with the bytes inline. `detail` is accepted and ignored: the
 * model's own preprocessing decides the resolution, and no Triton model takes such a setting.
 */
function imageOf(part: Record<string, unknown>, field: string): ImageInput {
  const image = part.image_url;
  if (image === null || typeof image !== 'object' || Array.isArray(image)) {
    throw invalidArgument(`${field}.image_url`, image, 'must be { "url": ..., "detail"?: ... }');
  }
  const { url, detail } = image as { url?: unknown; detail?: unknown };
  if (typeof url !== 'string' || !/^(?:https?:\/\/|data:)/i.test(url)) {
    throw invalidArgument(
      `${field}.image_url.url`,
      typeof url === 'string' && url.length > 64 ? `${url.slice(0, 64)}...` : url,
      'must be an http(s) URL or a data: URL (data:image/png;base64,...)',
    );
  }
  if (detail !== undefined && (typeof detail !== 'string' || !DETAILS.has(detail))) {
    throw invalidArgument(`${field}.image_url.detail`, detail, 'must be auto, low or high');
  }
  return { url };
}

/**
 * A message's content: a string, or a list of text parts and, in user messages, `image_url` parts,
 * whose images are collected into `images` in order.
 */
function contentOf(
  value: unknown,
  role: string,
  field: string,
  images: ImageInput[],
  imageFields: string[],
): { readonly text: string; readonly parts?: ChatContentPart[] } {
  if (value === null || value === undefined) return { text: '' };
  if (typeof value === 'string') return { text: value };
  if (!Array.isArray(value))
    throw invalidArgument(field, value, 'must be a string or an array of content parts');
  const parts = value.map((part: unknown, j): ChatContentPart => {
    const p = part as Record<string, unknown> | null;
    if (p !== null && typeof p === 'object' && p.type === 'text' && typeof p.text === 'string') {
      return { type: 'text', text: p.text };
    }
    if (role === 'user' && p !== null && typeof p === 'object' && p.type === 'image_url') {
      images.push(imageOf(p, `${field}[${j}]`));
      imageFields.push(`${field}[${j}]`);
      return { type: 'image' };
    }
    throw invalidArgument(
      `${field}[${j}]`,
      part,
      role === 'user'
        ? 'must be a text part ({ "type": "text", "text": ... }) or an image_url part ({ "type": "image_url", "image_url": { "url": ... } })'
        : `only text parts ({ "type": "text", "text": ... }) are supported in ${role} messages`,
    );
  });
  const text = parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  return parts.some((p) => p.type === 'image') ? { text, parts } : { text };
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
 * assistant's `tool_calls`, a tool result's `tool_call_id`, and where a user's images stood (their
 * URLs go to `images`, in order). `developer` is OpenAI's newer name for `system`, and templates
 * only know the older one.
 */
export function chatMessages(value: unknown): ChatInput {
  if (!Array.isArray(value) || value.length === 0) {
    throw invalidArgument('messages', value, 'must be a non-empty array of messages');
  }
  const images: ImageInput[] = [];
  const imageFields: string[] = [];
  const messages = value.map((m: unknown, i): ChatMessage => {
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
    const content = contentOf(message.content, role, `${field}.content`, images, imageFields);
    return {
      role: role === 'developer' ? 'system' : role,
      content: content.text,
      ...(content.parts !== undefined ? { parts: content.parts } : {}),
      ...(typeof name === 'string' ? { name } : {}),
      ...(toolCalls !== undefined ? { toolCalls } : {}),
      ...(typeof toolCallId === 'string' ? { toolCallId } : {}),
    };
  });
  return { messages, images, imageFields };
}
