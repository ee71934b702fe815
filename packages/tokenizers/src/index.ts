export type {
  ChatContentPart,
  ChatMessage,
  ChatTemplateChoice,
  ChatTool,
  ChatToolCall,
  RenderOptions,
} from './chat-template.js';
export { CHAT_TEMPLATE_CHOICES, ChatTemplate, loadChatTemplate } from './chat-template.js';
export type { HfTokenizerEngine, SpecialTokenValue, TokenizerConfig } from './hf-tokenizer.js';
export { HfTokenizer, tokenizerFromJson } from './hf-tokenizer.js';
export { loadTokenizer } from './load.js';
export type { TokenizerDirOptions } from './tokenizer-dir.js';
export { loadTokenizerDir } from './tokenizer-dir.js';
export type { GuidedFunction } from './tools/guided.js';
export {
  namedCallParser,
  namedToolSchema,
  requiredCallsParser,
  requiredToolsSchema,
} from './tools/guided.js';
export { hermesParser } from './tools/hermes.js';
export { llama3JsonParser } from './tools/llama3-json.js';
export type { ToolCallParserChoice } from './tools/parsers.js';
export { pickToolCallParser, TOOL_CALL_PARSERS } from './tools/parsers.js';
export type { ToolCallPlan, ToolCallPlanInput, ToolCallPlanning, ToolChoice } from './tools/plan.js';
export { planToolCalls } from './tools/plan.js';
export type { ToolOutputPiece, ToolReading } from './tools/reader.js';
export { argumentPieces, readToolCalls, ToolCallReader } from './tools/reader.js';
export type {
  ParsedToolCall,
  ToolCallParser,
  ToolCallStream,
  ToolParseContext,
  ToolStreamPiece,
} from './tools/tool-call.js';
