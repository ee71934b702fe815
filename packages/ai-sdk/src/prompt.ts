import type {
  LanguageModelV4FilePart,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
  SharedV4Warning,
} from '@ai-sdk/provider';
import type { ChatMessage, ChatToolCall } from '@trtllm/tokenizers';

/**
 * The AI SDK's message list as the chat template takes it: text parts joined, tool calls and tool
 * results carried over, and everything the model cannot read (images, audio, reasoning files)
 * left out with one warning per kind, so that nothing is dropped silently.
 */
export function chatMessages(prompt: LanguageModelV4Prompt): {
  readonly messages: ChatMessage[];
  readonly warnings: SharedV4Warning[];
} {
  const messages: ChatMessage[] = [];
  const dropped = new Map<string, string>();
  const drop = (feature: string, details: string): void => {
    if (!dropped.has(feature)) dropped.set(feature, details);
  };
  const fileText = (part: LanguageModelV4FilePart): string | undefined => {
    if (part.data.type === 'text') return part.data.text;
    drop(`file parts (${part.mediaType})`, 'the model reads text only; the file was left out of the prompt');
    return undefined;
  };
  for (const message of prompt) {
    switch (message.role) {
      case 'system':
        messages.push({ role: 'system', content: message.content });
        break;
      case 'user': {
        const texts: string[] = [];
        for (const part of message.content) {
          const text = part.type === 'text' ? part.text : fileText(part);
          if (text !== undefined) texts.push(text);
        }
        messages.push({ role: 'user', content: texts.join('') });
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
            messages.push(toolMessage(part.toolCallId, part.toolName, part.output));
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
            messages.push(toolMessage(part.toolCallId, part.toolName, part.output));
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
  return { messages, warnings };
}

function toolMessage(id: string, name: string, output: LanguageModelV4ToolResultOutput): ChatMessage {
  return { role: 'tool', content: toolOutputText(output), name, toolCallId: id };
}

/** A tool's result as the text the model reads. */
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
