import type { EncodedRequest } from '../models/encode-request.js';
import type { ModelSchema } from '../models/schema.js';
import type { GenerateRequest } from '../request/request.js';
import type { RetryOptions, RetryPolicy } from '../retry.js';
import type { Tokenizer } from '../text/tokenizer.js';
import type { CallOptions, InferResponse, Transport } from '../transport.js';
import type { GenerationEvent } from './events.js';

/** Per-call options of `generate()` and `stream()`. */
export interface GenerateOptions {
  /** Aborting cancels the request; the result (or final chunk) reports `cancelled` and how the server was told. */
  readonly signal?: AbortSignal;
  /** Total deadline in milliseconds, shared by all attempts (each sent as a gRPC deadline). */
  readonly timeoutMs?: number;
  /** Longest wait for the next response in milliseconds before the request is ended with `deadline_exceeded`. */
  readonly idleTimeoutMs?: number;
  /** Extra headers (gRPC metadata) for this call. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Retries of a request that failed before its first response (field by field over the client's
   * `retry`). Once a response has arrived the request is never retried: its error is thrown
   * after the chunks already delivered.
   */
  readonly retry?: RetryOptions;
}

/** What a generation needs from its client. */
export interface GenerationContext {
  readonly transport: Transport;
  readonly schema: ModelSchema;
  readonly request: GenerateRequest;
  readonly encoded: EncodedRequest;
  readonly streaming: boolean;
  readonly tokenizer: Tokenizer | undefined;
  readonly options: GenerateOptions;
  /** The resolved retry policy of this request. */
  readonly retry: RetryPolicy;
  /** Called once per client when an early end cannot stop the server's generation. */
  readonly warnServerKeepsGenerating: (model: string, flavor: string) => void;
  readonly observe?: (event: GenerationEvent) => void;
  /**
   * Where a non-decoupled request gets its one response, instead of its own `infer` call: a
   * member of a batched request reads its row of the shared answer.
   */
  readonly unary?: (options: CallOptions) => Promise<InferResponse>;
}

/**
 * The context a generation keeps: all but the encoded request (an idle stream keeps none of its
 * inputs), every field present so that the object has one fixed shape. A copy made by spreading
 * put the fields past the first few in a separate property array, one more object to fetch for
 * every response.
 */
export interface WireContext {
  readonly transport: Transport;
  readonly schema: ModelSchema;
  readonly request: GenerateRequest;
  readonly streaming: boolean;
  readonly tokenizer: Tokenizer | undefined;
  readonly options: GenerateOptions;
  readonly retry: RetryPolicy;
  readonly warnServerKeepsGenerating: (model: string, flavor: string) => void;
  readonly observe: ((event: GenerationEvent) => void) | undefined;
  readonly unary: ((options: CallOptions) => Promise<InferResponse>) | undefined;
}
