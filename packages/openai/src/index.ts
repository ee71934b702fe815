export type { TransportFromUrlOptions } from '@trtllm/connect';
export { transportFromUrl } from '@trtllm/connect';
export type {
  ChatMessage,
  ChatTemplateChoice,
  ChatTool,
  ChatToolCall,
  RenderOptions,
  ToolCallParserChoice,
} from '@trtllm/tokenizers';
export { CHAT_TEMPLATE_CHOICES, ChatTemplate, loadChatTemplate, TOOL_CALL_PARSERS } from '@trtllm/tokenizers';
export type { ServableModels } from './repository-models.js';
export { listServableModels } from './repository-models.js';
export type { LoraAdapterOptions, ServedModelOptions } from './served-models.js';
export type { OpenAiServer, OpenAiServerBackend, OpenAiServerOptions } from './server.js';
export { createOpenAiServer } from './server.js';
