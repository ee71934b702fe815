export type {
  ChatTritonCallOptions,
  ChatTritonInput,
  ChatTritonOptions,
  TritonCallTransportOptions,
} from './chat-options.js';
export { ChatTriton } from './chat-triton.js';
export type { TritonConnection } from './connection.js';
export type { TritonResponseMetadata } from './metadata.js';
export type { TritonGenerationSettings } from './settings.js';
export { DEFAULT_MAX_TOKENS } from './settings.js';
