import type { RetryPlan } from './retry.js';
import type { DataType } from './tensors/data-types.js';
import type { Tensor } from './tensors/tensor.js';

/** A request or response parameter value (gRPC `InferParameter`, HTTP `parameters`). */
export type ParameterValue = boolean | number | bigint | string;

/** Request or response parameters by name. */
export type Parameters = Readonly<Record<string, ParameterValue>>;

/** One inference request in core types, ready for any transport. */
export interface InferRequest {
  readonly model: string;
  /** Empty or absent: the server picks (normally the latest version). */
  readonly modelVersion?: string;
  /** Echoed by the server on every response; the TRT-LLM stop path keys on it. */
  readonly id: string;
  readonly inputs: readonly Tensor[];
  /** Output names to return; absent or empty means all outputs. */
  readonly outputs?: readonly string[];
  readonly parameters?: Parameters;
  /**
   * HTTP only: carry a unary call on Triton's `/generate` endpoint (text models) instead of
   * KServe `/infer`. Streams always use `/generate_stream` over HTTP. gRPC ignores it.
   */
  readonly endpoint?: 'generate' | 'infer';
}

/** One response of a request. */
export interface InferResponse {
  readonly model: string;
  readonly modelVersion: string;
  readonly id: string;
  /**
   * Output tensors. Over HTTP `/generate` and `/generate_stream` the server sends no types or
   * shapes: strings arrive as BYTES, booleans as BOOL and numbers as FP64, each shaped `[n]`
   * (`[]` for a JSON scalar). Readers in core accept either form.
   */
  readonly outputs: readonly Tensor[];
  readonly parameters: Parameters;
  /** True on the last response of its request (gRPC `triton_final_response`, or the end of an HTTP stream). */
  readonly final: boolean;
}

/** Options every transport call takes. */
export interface CallOptions {
  /** Aborting cancels the call on the wire. */
  readonly signal?: AbortSignal;
  /** Total deadline for the call, in milliseconds (sent as a gRPC deadline where the protocol has one). */
  readonly timeoutMs?: number;
  /** Extra headers (gRPC metadata) for this call only. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The retry plan of the client call this transport call is an attempt of. A transport that can
   * try the request elsewhere (the replica transport) asks it before moving, so that one policy,
   * one attempt budget and one deadline govern every attempt; other transports ignore it.
   */
  readonly retryPlan?: RetryPlan;
}

/**
 * The responses of one streamed request. Every transport's streams do the same three things:
 * they are read (`pull`, or iteration), they are cancelled (`cancel`, or the call's signal), and
 * they say whether a cancel stops the request on the server (`cancelsOnServer`). The request goes
 * out when reading (or `sendStop`) starts. An error reported by the server for this request comes
 * after every response that came before it. Breaking out of iteration cancels the call.
 */
export interface InferStream extends AsyncIterable<InferResponse> {
  /**
   * Hands the next response, the end of the stream or its error to exactly one of `sink`'s
   * methods, once, as soon as it is known (possibly before `pull` returns). The client reads
   * every stream this way: a delivered response costs it one promise. One pull at a time.
   */
  pull(sink: InferSink): void;
  /**
   * Ends the request now: a read in progress, and every later one, fails with `cancelled`, and the
   * server is told as far as `cancelsOnServer` says (a stream of its own: the call is cancelled,
   * RST_STREAM over gRPC, a closed connection over HTTP). Aborting the call's `signal` does the
   * same. Idempotent; a no-op once the stream ended.
   */
  cancel(): void;
  /**
   * Sends the backend's in-band stop request (same request id) so that the running request ends
   * gracefully and its final response still arrives. gRPC sends it on the same call; HTTP posts
   * it to `/generate_stream` as a separate request.
   */
  sendStop(stop: InferRequest): Promise<void>;
  /**
   * Whether `cancel()` stops the request on the server by itself. A request sharing a call with
   * others (gRPC `multiplex`) only stops listening (`false`), so the client sends the model's
   * in-band stop instead where there is one.
   */
  readonly cancelsOnServer: boolean;
}

/** Where {@link InferStream.pull} hands the next event of a stream; exactly one method is called. */
export interface InferSink {
  /** The next response, in order. */
  onResponse(response: InferResponse): void;
  /** The stream ended after its last response. */
  onEnd(): void;
  /** The stream failed; every response before the failure was handed out first. */
  onError(error: unknown): void;
}

/** `GET /v2` / `ServerMetadata`. */
export interface ServerMetadata {
  readonly name: string;
  readonly version: string;
  readonly extensions: readonly string[];
}

/** One tensor of the model metadata. `-1` marks a variable dimension. */
export interface TensorMetadata {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
}

/** `GET /v2/models/{m}` / `ModelMetadata`. */
export interface ModelMetadata {
  readonly name: string;
  readonly versions: readonly string[];
  readonly platform: string;
  readonly inputs: readonly TensorMetadata[];
  readonly outputs: readonly TensorMetadata[];
}

/** One declared input or output of a model config. Dims exclude the implicit batch dimension. */
export interface TensorSpec {
  readonly name: string;
  readonly datatype: DataType;
  readonly dims: readonly number[];
  /** Inputs only: the model runs without it. */
  readonly optional: boolean;
  readonly reshape?: readonly number[];
}

/** One step of a platform `ensemble` model. */
export interface EnsembleStep {
  readonly modelName: string;
  readonly modelVersion: number;
  readonly inputMap: Readonly<Record<string, string>>;
  readonly outputMap: Readonly<Record<string, string>>;
}

/** The parts of a model's config the SDK reads, the same whichever transport fetched it. */
export interface ModelConfig {
  readonly name: string;
  readonly platform: string;
  readonly backend: string;
  /** 0: no batch dimension; > 0: every input and output has an implicit leading batch dimension. */
  readonly maxBatchSize: number;
  readonly inputs: readonly TensorSpec[];
  readonly outputs: readonly TensorSpec[];
  readonly decoupled: boolean;
  readonly parameters: Readonly<Record<string, string>>;
  /** Present for platform `ensemble` models. */
  readonly ensembleSteps?: readonly EnsembleStep[];
}

/** A count and total duration, as Triton reports them. */
export interface StatisticDuration {
  readonly count: number;
  readonly ns: number;
}

/** Per-model statistics (`ModelStatistics`). */
export interface ModelStatistics {
  readonly name: string;
  readonly version: string;
  /** Milliseconds since the epoch; 0 when never used. */
  readonly lastInference: number;
  readonly inferenceCount: number;
  readonly executionCount: number;
  /** success, fail, queue, compute_input, compute_infer, compute_output, cache_hit, cache_miss. */
  readonly inferenceStats: Readonly<Record<string, StatisticDuration>>;
}

/** One model of the server's repository, loaded or not (gRPC `RepositoryIndex`, `POST /v2/repository/index`). */
export interface RepositoryModel {
  readonly name: string;
  /** Empty when the server names no version (a model that is not loaded). */
  readonly version: string;
  /** `READY`, `UNAVAILABLE`, `LOADING`...; empty when the server does not say. */
  readonly state: string;
  /** Why the model is in that state (a load error), empty when there is nothing to say. */
  readonly reason: string;
}

/**
 * The smallest interface a transport implements. It translates between core types and a wire
 * protocol and decides nothing: validation, schema mapping, stop sequences, text deltas and
 * finish reasons live in core. Every failure is a `TritonLlmError`.
 */
export interface Transport {
  /** The wire protocol underneath, so callers can adapt to what only one of them can carry. */
  readonly protocol: 'grpc' | 'http';
  /** One request, one response (non-decoupled models). */
  infer(request: InferRequest, options?: CallOptions): Promise<InferResponse>;
  /**
   * One request, streamed responses (decoupled models, or any model answering once). The client
   * passes no signal here: it ends its streams with `cancel()`.
   */
  stream(request: InferRequest, options?: CallOptions): InferStream;
  /**
   * Whether the server process is up (`/v2/health/live`, gRPC `ServerLive`). A reachable server
   * that is not live answers `false`; an unreachable one rejects with `unavailable`.
   */
  serverLive(options?: CallOptions): Promise<boolean>;
  /** Whether the server accepts inference requests (`/v2/health/ready`, gRPC `ServerReady`). */
  serverReady(options?: CallOptions): Promise<boolean>;
  /** Whether one model (an absent version means the server's pick) is loaded and ready. */
  modelReady(model: string, version?: string, options?: CallOptions): Promise<boolean>;
  /** The server's name, version and protocol extensions (`GET /v2`, gRPC `ServerMetadata`). */
  serverMetadata(options?: CallOptions): Promise<ServerMetadata>;
  /** The declared inputs and outputs of one model, as the server reports them. */
  modelMetadata(model: string, version?: string, options?: CallOptions): Promise<ModelMetadata>;
  /**
   * The parts of one model's config the SDK needs (schema detection reads it to tell the model
   * flavor and whether streaming is possible).
   */
  modelConfig(model: string, version?: string, options?: CallOptions): Promise<ModelConfig>;
  /** Statistics of one model, or of every model when `model` is absent. */
  modelStatistics(model?: string, version?: string, options?: CallOptions): Promise<ModelStatistics[]>;
  /**
   * The models in the server's repository. Optional for a transport of one's own: the client asks
   * for it only after a model was not found, to name the models there are.
   */
  repositoryIndex?(options?: CallOptions): Promise<RepositoryModel[]>;
  /** Releases connections; calls after `close()` fail with `unavailable`. */
  close(): Promise<void>;
}
