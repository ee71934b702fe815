import type { CallOptions, InferRequest, InferStream } from '@trtllm/sdk';
import type { HttpClient } from './client.js';

/**
 * What carries `/generate_stream` when it is not fetch: the Node entry point's keep-alive
 * sockets. Made once per transport for its base URL; closed with it.
 */
export interface StreamEngine {
  stream(client: HttpClient, request: InferRequest, options: CallOptions | undefined): InferStream;
  close(): void;
}

export type StreamEngineFactory = (baseUrl: string) => StreamEngine;
