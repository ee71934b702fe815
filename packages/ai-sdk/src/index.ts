export type { TritonLanguageModel } from './language-model.js';
export type {
  TritonModelId,
  TritonModelSettings,
  TritonProvider,
  TritonProviderSettings,
} from './provider.js';
export { createTriton, triton } from './provider.js';
export type { TritonJsonMatrix, TritonProviderOptions } from './provider-options.js';
