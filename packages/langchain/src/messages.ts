import type { BaseMessage } from '@langchain/core/messages';
import type { ImageInput } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import type { ChatContentPart, ChatMessage, ChatToolCall } from '@trtllm/tokenizers';

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

/**
 * An image content block as the SDK sends it. OpenAI-style `image_url` blocks (a URL or data URL,
 * as a string or `{ url, detail }`; `detail` is ignored: the model's preprocessing picks the
 * resolution) and LangChain's standard `image` blocks (`url`, or `data` as base64 or bytes with
 * `mimeType`; the older `source_type` / `mime_type` spelling too). A provider file id cannot be
 * resolved by Triton and is refused.
 */
function imageOf(block: Record<string, unknown>, field: string): ImageInput {
  if (block.type === 'image_url') {
    const value = block.image_url;
    const url =
      typeof value === 'string'
        ? value
        : value !== null && typeof value === 'object'
          ? (value as { url?: unknown }).url
          : undefined;
    if (typeof url !== 'string') {
      throw invalidArgument(`${field}.image_url`, value, 'must be a URL or { url, detail? }');
    }
    return { url };
  }
  const mimeType = block.mimeType ?? block.mime_type;
  if (typeof block.url === 'string') return { url: block.url };
  const data = block.data;
  if (data instanceof Uint8Array || typeof data === 'string') {
    if (typeof mimeType !== 'string') {
      throw invalidArgument(
        `${field}.mimeType`,
        mimeType,
        'must name the image format of data (image/png...)',
      );
    }
    // Base64 text travels as the data URL it spells, so the bytes are never decoded and re-encoded.
    return typeof data === 'string'
      ? { url: `data:${mimeType};base64,${data}` }
      : { data, mediaType: mimeType };
  }
  throw invalidArgument(
    field,
    block.fileId ?? block.id ?? block,
    'must give the image as url or data (with mimeType): Triton cannot resolve a provider file id',
  );
}

/**
 * A message's content: a string, or content blocks of which text blocks and, in human messages,
 * image blocks are supported; the images go to `images` in order and their places to `parts`.
 */
function contentOf(
  content: unknown,
  role: string,
  field: string,
  images: ImageInput[],
): { readonly text: string; readonly parts?: ChatContentPart[] } {
  if (typeof content === 'string') return { text: content };
  if (!Array.isArray(content)) throw invalidArgument(field, content, 'must be a string or content blocks');
  const parts = content.map((block: unknown, j): ChatContentPart => {
    const b = block as Record<string, unknown> | null;
    if (b !== null && typeof b === 'object' && b.type === 'text' && typeof b.text === 'string') {
      return { type: 'text', text: b.text };
    }
    if (
      role === 'user' &&
      b !== null &&
      typeof b === 'object' &&
      (b.type === 'image_url' || b.type === 'image')
    ) {
      images.push(imageOf(b, `${field}[${j}]`));
      return { type: 'image' };
    }
    throw invalidArgument(
      `${field}[${j}]`,
      typeof b === 'object' && b !== null ? (b.type ?? b) : b,
      role === 'user'
        ? 'only text and image content blocks are supported (the model takes text through its chat template, images beside it)'
        : 'only text content blocks are supported here (the model takes text through its chat template; images only in human messages)',
    );
  });
  const text = parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  return parts.some((p) => p.type === 'image') ? { text, parts } : { text };
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
 * `tool_calls`, a ToolMessage's `tool_call_id`, and the images of human messages (in order, for the
 * request's `images`; each message keeps where they stood). Other content is refused by name
 * rather than dropped, since dropping it would change the prompt without telling anyone.
 */
export function chatMessagesOf(messages: readonly BaseMessage[]): {
  readonly messages: ChatMessage[];
  readonly images: ImageInput[];
} {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalidArgument('messages', messages, 'must be a non-empty list of messages');
  }
  const images: ImageInput[] = [];
  const chat = messages.map((message, i): ChatMessage => {
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
    const content = contentOf(message.content, role, `${field}.content`, images);
    return {
      role,
      content: content.text,
      ...(content.parts !== undefined ? { parts: content.parts } : {}),
      ...(typeof name === 'string' && name.length > 0 ? { name } : {}),
      ...(toolCalls !== undefined ? { toolCalls } : {}),
      ...(role === 'tool' && typeof toolCallId === 'string' ? { toolCallId } : {}),
    };
  });
  return { messages: chat, images };
}
