/** Placeholder: the provider is being written. */
export const TRTLLM_AI_SDK_PROVIDER = 'trtllm';
