// The rule lives in core, where the transports use it for their own `baseUrl` too (issue 53);
// connect keeps its names for it.
export type { TritonEndpoint, TritonProtocol, TritonUrlOptions } from '@trtllm/sdk/transport';
export { parseTritonUrl } from '@trtllm/sdk/transport';
