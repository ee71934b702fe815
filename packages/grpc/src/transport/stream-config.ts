import { type CallMetadata, grpcTimeout } from '../call/index.js';
import type { H2Engine, H2PreparedRequest } from '../h2/index.js';

const PATH = '/inference.GRPCInferenceService/ModelStreamInfer';

/** What a streamed call needs from its transport: the engine and the per-call settings. */
export interface StreamConfig {
  readonly engine: H2Engine;
  /** The call's request headers, without the deadline. */
  readonly headers: CallMetadata;
  /** `headers` made ready once by the engine, for the calls without a deadline. */
  readonly request: H2PreparedRequest;
  readonly timeoutMs: number | undefined;
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number | undefined;
  readonly gzip: boolean;
  readonly logger: { warn(message: string): void };
}

/** The `ModelStreamInfer` request of `headers` (the deadline header added for a call with one). */
export function streamRequest(
  engine: H2Engine,
  headers: CallMetadata,
  timeoutMs: number | undefined,
): H2PreparedRequest {
  return engine.prepare(
    PATH,
    timeoutMs === undefined ? headers : { ...headers, 'grpc-timeout': grpcTimeout(timeoutMs) },
  );
}
