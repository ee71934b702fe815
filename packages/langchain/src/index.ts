/** Placeholder: the chat model is being written. */
export const TRTLLM_LANGCHAIN = 'trtllm';
