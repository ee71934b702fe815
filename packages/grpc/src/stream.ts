// Without it a decoupled model that ends without data sends nothing, and the end of a request
// cannot be told (tensorrtllm_backend #552); with it every request ends on a flagged response.
export const STREAM_PARAMETERS = { triton_enable_empty_final_response: true } as const;
