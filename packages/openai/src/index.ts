export type { ChatMessage, ChatTemplateChoice } from '@trtllm/tokenizers';
export { CHAT_TEMPLATE_CHOICES, ChatTemplate, loadChatTemplate } from '@trtllm/tokenizers';
export type { OpenAiServer, OpenAiServerBackend, OpenAiServerOptions } from './server.js';
export { createOpenAiServer } from './server.js';
export { transportFromUrl } from './transport-url.js';
