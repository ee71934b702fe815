/** A model request as every front end hands it to the engine, and the sink its responses go to. */
import type { TritonError } from '../errors.js';
import type { ModelDef } from '../models/repository.js';
import type { Tensor } from '../tensor.js';
import type { FaultPlan } from './faults.js';

export type Protocol = 'grpc' | 'http';

export type ParameterValue = boolean | number | bigint | string;

export interface InferenceRequest {
  readonly model: ModelDef;
  readonly id: string;
  readonly inputs: ReadonlyMap<string, Tensor>;
  readonly parameters: ReadonlyMap<string, ParameterValue>;
  readonly protocol: Protocol;
  readonly faults: FaultPlan;
  /**
   * `performance.now()` when the front end took the request, before validation and decoding: the
   * injected delays count from here, so the fake's own handling does not add to them.
   */
  readonly arrivalMs: number;
}

/**
 * One response of a model. `final` marks the last response of the request where it carries
 * tensors (a non-decoupled model's one response; the generator's and the ensemble's last token or
 * whole text); a decoupled request that ends without one ends by `complete()` (a flags-only final).
 */
export interface ModelResponse {
  readonly outputs: readonly Tensor[];
  /** Generated tokens this response carries (fault thresholds count these). */
  readonly tokens: number;
  readonly final: boolean;
}

/** How a send went: delivered (or queued), the client is gone, or the front end broke the response. */
export type Delivery = 'ok' | 'cancelled' | 'failed';

/**
 * Where a request's responses go. The engine calls `send` for each response (awaiting it is the
 * backpressure), then exactly one of `complete` or `fail` unless a send reported the request over.
 */
export interface ResponseSink {
  /** Aborted when the front end learns the client went away. */
  readonly signal: AbortSignal;
  send(response: ModelResponse): Promise<Delivery>;
  /** The request is over; a decoupled model sends no more (Triton's null response flagged final). */
  complete(): void;
  fail(error: TritonError): void;
}
