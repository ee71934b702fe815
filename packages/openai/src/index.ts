export type { ChatMessage, ChatTemplateChoice } from './chat-template.js';
export { CHAT_TEMPLATE_CHOICES, ChatTemplate, loadChatTemplate } from './chat-template.js';
export type { OpenAiServer, OpenAiServerBackend, OpenAiServerOptions } from './server.js';
export { createOpenAiServer } from './server.js';
export { transportFromUrl } from './transport-url.js';
