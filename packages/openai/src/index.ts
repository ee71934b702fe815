export type {
  ChatMessage,
  ChatTemplateChoice,
  ChatTool,
  ChatToolCall,
  RenderOptions,
} from '@trtllm/tokenizers';
export { CHAT_TEMPLATE_CHOICES, ChatTemplate, loadChatTemplate } from '@trtllm/tokenizers';
export type { OpenAiServer, OpenAiServerBackend, OpenAiServerOptions } from './server.js';
export { createOpenAiServer } from './server.js';
export type { ToolCallParserChoice } from './tool-parsers/index.js';
export { TOOL_CALL_PARSERS } from './tool-parsers/index.js';
export { transportFromUrl } from './transport-url.js';
