import type { OutgoingHttpHeaders } from 'node:http2';
import { encodeHeaderBlock } from './h2/frames.js';
import type { H2Sessions } from './h2/sessions.js';
import { grpcTimeout } from './headers.js';

const PATH = '/inference.GRPCInferenceService/ModelStreamInfer';

/** What a streamed call needs from its transport: the connections and the per-call settings. */
export interface H2StreamConfig {
  readonly sessions: H2Sessions;
  /** Where the calls go (`:scheme` and `:authority`). */
  readonly url: URL;
  /** The call's request headers, without the deadline. */
  readonly headers: OutgoingHttpHeaders;
  /** `headers` encoded once, for the calls without a deadline. */
  readonly headerBlock: Buffer;
  readonly timeoutMs: number | undefined;
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number | undefined;
  readonly gzip: boolean;
  readonly logger: { warn(message: string): void };
}

/** The request header block of a config (the deadline header added for a call with one). */
export function streamHeaderBlock(
  url: URL,
  headers: OutgoingHttpHeaders,
  timeoutMs: number | undefined,
): Buffer {
  return encodeHeaderBlock(
    url,
    PATH,
    timeoutMs === undefined ? headers : { ...headers, 'grpc-timeout': grpcTimeout(timeoutMs) },
  );
}
