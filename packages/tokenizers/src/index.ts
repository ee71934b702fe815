export type {
  ChatMessage,
  ChatTemplateChoice,
  ChatTool,
  ChatToolCall,
  RenderOptions,
} from './chat-template.js';
export { CHAT_TEMPLATE_CHOICES, ChatTemplate, loadChatTemplate } from './chat-template.js';
export type { SpecialTokenValue, TokenizerConfig } from './hf-tokenizer.js';
export { HfTokenizer, tokenizerFromJson } from './hf-tokenizer.js';
export { loadTokenizer } from './load.js';
