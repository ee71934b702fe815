import type {
  LanguageModelV4FilePart,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
  SharedV4Warning,
} from '@ai-sdk/provider';
import {
  convertBase64ToUint8Array,
  detectMediaType,
  getTopLevelMediaType,
  isFullMediaType,
} from '@ai-sdk/provider-utils';
import type { ImageInput } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import type { ChatContentPart, ChatMessage, ChatToolCall } from '@trtllm/tokenizers';

/**
 * The AI SDK's message list as the chat template takes it: text parts joined, tool calls and tool
 * results carried over, the images of user messages collected in order for the request's `images`
 * (each message keeping where its images stood, for templates with image markers), and everything
 * else the model cannot read (audio, documents, reasoning files) left out with one warning per
 * kind, so that nothing is dropped silently.
 */
export function chatMessages(prompt: LanguageModelV4Prompt): {
  readonly messages: ChatMessage[];
  readonly images: ImageInput[];
  readonly warnings: SharedV4Warning[];
} {
  const messages: ChatMessage[] = [];
  const images: ImageInput[] = [];
  const dropped = new Map<string, string>();
  const drop = (feature: string, details: string): void => {
    if (!dropped.has(feature)) dropped.set(feature, details);
  };
  const fileText = (part: LanguageModelV4FilePart): string | undefined => {
    if (part.data.type === 'text') return part.data.text;
    drop(`file parts (${part.mediaType})`, 'the model reads text only; the file was left out of the prompt');
    return undefined;
  };
  for (const [i, message] of prompt.entries()) {
    switch (message.role) {
      case 'system':
        messages.push({ role: 'system', content: message.content });
        break;
      case 'user': {
        const parts: ChatContentPart[] = [];
        for (const [j, part] of message.content.entries()) {
          if (part.type === 'file' && getTopLevelMediaType(part.mediaType) === 'image') {
            images.push(imageOf(part, `messages[${i}].content[${j}]`));
            parts.push({ type: 'image' });
            continue;
          }
          const text = part.type === 'text' ? part.text : fileText(part);
          if (text !== undefined) parts.push({ type: 'text', text });
        }
        const content = parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
        const withImages = parts.some((p) => p.type === 'image');
        messages.push({ role: 'user', content, ...(withImages ? { parts } : {}) });
        break;
      }
      case 'assistant': {
        const texts: string[] = [];
        const toolCalls: ChatToolCall[] = [];
        for (const part of message.content) {
          if (part.type === 'text') texts.push(part.text);
          else if (part.type === 'file') {
            const text = fileText(part);
            if (text !== undefined) texts.push(text);
          } else if (part.type === 'tool-call') {
            toolCalls.push({
              id: part.toolCallId,
              name: part.toolName,
              arguments: JSON.stringify(part.input ?? {}),
            });
          } else if (part.type === 'tool-result') {
            messages.push(toolMessage(part.toolCallId, part.toolName, part.output, drop));
          } else {
            drop(
              `${part.type} parts in assistant messages`,
              'earlier reasoning and custom parts are not sent back to the model',
            );
          }
        }
        messages.push({
          role: 'assistant',
          content: texts.join(''),
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
        });
        break;
      }
      case 'tool':
        for (const part of message.content) {
          if (part.type === 'tool-result')
            messages.push(toolMessage(part.toolCallId, part.toolName, part.output, drop));
          else drop('tool approval responses', 'the model has no provider-executed tools to approve');
        }
        break;
    }
  }
  const warnings: SharedV4Warning[] = [...dropped].map(([feature, details]) => ({
    type: 'unsupported',
    feature,
    details,
  }));
  return { messages, images, warnings };
}

/**
 * An image part as the SDK sends it: an http(s) URL as is (Triton's model fetches it; the provider
 * declares such URLs supported, so the AI SDK does not download them), a `data:` URL as is, and
 * bytes or base64 as bytes with a full media type (sniffed from the bytes when the AI SDK only
 * knows `image`).
 */
function imageOf(part: LanguageModelV4FilePart, field: string): ImageInput {
  const { data } = part;
  switch (data.type) {
    case 'url':
      return { url: data.originalUrl ?? data.url.href };
    case 'data': {
      const bytes = typeof data.data === 'string' ? convertBase64ToUint8Array(data.data) : data.data;
      const mediaType = isFullMediaType(part.mediaType)
        ? part.mediaType
        : detectMediaType({ data: bytes, topLevelType: 'image' });
      if (mediaType === undefined) {
        throw invalidArgument(
          `${field}.mediaType`,
          part.mediaType,
          'must name the image format (image/png, image/jpeg...): it was not given and the bytes are not a known image format',
        );
      }
      return { data: bytes, mediaType };
    }
    default:
      throw invalidArgument(
        `${field}.data`,
        data.type,
        'must be an image URL, bytes or base64: Triton takes no provider file references or text as images',
      );
  }
}

function toolMessage(
  id: string,
  name: string,
  output: LanguageModelV4ToolResultOutput,
  drop: (feature: string, details: string) => void,
): ChatMessage {
  if (output.type === 'content' && output.value.some((part) => part.type !== 'text')) {
    drop(
      'non-text tool result parts',
      'a tool result reaches the model as text; its images and files were left out',
    );
  }
  return { role: 'tool', content: toolOutputText(output), name, toolCallId: id };
}

/** A tool's result as the text the model reads (its other parts are warned about by toolMessage). */
function toolOutputText(output: LanguageModelV4ToolResultOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'execution-denied':
      return `Tool execution denied${output.reason !== undefined ? `: ${output.reason}` : '.'}`;
    case 'content':
      return output.value.map((part) => (part.type === 'text' ? part.text : '')).join('');
  }
}
