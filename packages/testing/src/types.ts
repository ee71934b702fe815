/** The public shapes of `@trtllm/testing`. */

/** Options of {@link startFakeTriton}. */
export interface FakeTritonOptions {
  /** Interface to listen on. Default `127.0.0.1`. */
  readonly host?: string;
  /** gRPC port; 0 (default) picks a free one. */
  readonly grpcPort?: number;
  /** HTTP port; 0 (default) picks a free one. */
  readonly httpPort?: number;
  /**
   * The gRPC front end's SETTINGS_MAX_CONCURRENT_STREAMS per connection, as proxies and many gRPC
   * servers set one (nginx 128, HAProxy 100); default none, as Triton.
   */
  readonly grpcMaxConcurrentStreams?: number;
  /**
   * The newest events {@link FakeTriton.events} keeps; older ones are forgotten, so a fake that
   * serves for hours stays bounded. Default 10,000 (a request records two to four); `Infinity`
   * keeps every event, `0` none (waiting for future events still works).
   */
  readonly maxEvents?: number;
  /** Milliseconds before the first token of each generation. Default 0. */
  readonly ttftMs?: number;
  /** Milliseconds between tokens. Default 0: as fast as the client reads. */
  readonly itlMs?: number;
  /**
   * With no time between tokens (`itlMs` 0), how many tokens a generation sends back to back before
   * the others' turn. Default 64: a short answer comes out whole, the fastest a fake can serve. 1
   * sends one token of each generation in turn, as a GPU's in-flight batching does (one token per
   * request per iteration); a client that reads many streams costs more per token that way, since
   * each token finds its request's state cold, so benchmarks of such clients want 1.
   */
  readonly tokensPerTurn?: number;
  /**
   * Milliseconds of one in-flight batching iteration. When set, every generation gets its next
   * token at the same step of one clock, as a GPU's batch iteration makes one token for each request
   * in it: the tokens of all live streams leave together, and a request that arrives between steps
   * joins at the next (after `ttftMs`, if set). `itlMs` and `tokensPerTurn` are then unused.
   */
  readonly batchStepMs?: number;
  /** Answer browsers: `Access-Control-Allow-*` headers on HTTP, including OPTIONS preflights. */
  readonly cors?: boolean;
  /** Serve gRPC and HTTPS with this certificate; `requireClientCert` asks for mutual TLS. */
  readonly tls?: {
    readonly cert: string | Buffer;
    readonly key: string | Buffer;
    readonly ca?: string | Buffer;
    readonly requireClientCert?: boolean;
  };
  /**
   * Which backend's tensor names and dims to declare. `v0.11`: `min_length`, `random_seed`, ensemble
   * `max_tokens` dims `[-1]`, none of the 2025+ tensors (`num_return_sequences`,
   * `exclude_input_in_output`, `num_*_tokens`, ...). `2025-03`: the official models of that
   * snapshot (tensorrtllm_backend a315d2d): the 2025 tensors, the pre-2026 names, no
   * `return_num_*_tokens` / `num_*_tokens`. Default `latest`.
   */
  readonly backendVersion?: 'latest' | '2025-03' | 'v0.11';
  /** Per-model override of the decoupled transaction policy (an ensemble follows its generator). */
  readonly decoupled?: Partial<Record<string, boolean>>;
  /** `accumulate_tokens` of `tensorrt_llm_bls`. Default true. */
  readonly accumulateTokens?: boolean;
  /**
   * Triton's `--model-control-mode=explicit`: only `loadModels` are loaded at start, and models load
   * and unload on request (HTTP `POST /v2/repository/models/<name>/load` or `/unload`, gRPC
   * `RepositoryModelLoad` / `RepositoryModelUnload`), with Triton's answers: a model never loaded is
   * unknown but listed in the index by name, an unloaded one `UNAVAILABLE` ("has no available
   * versions"), an ensemble is unloaded with a model it composes and loaded again with it, and a BLS
   * whose `tensorrt_llm` is unloaded stays ready but fails each request. Left out: every model is
   * served and load / unload are refused with 503 / UNAVAILABLE, as Triton refuses them by default.
   */
  readonly modelControl?: 'explicit';
  /**
   * With `modelControl: 'explicit'`, Triton's `--load-model`: the models loaded at start (an
   * ensemble brings the models it composes; `'*'` loads all). Default none.
   */
  readonly loadModels?: readonly string[];
}

/** What a model request did, as the event log of GENERATOR.md records it. */
export interface FakeEvent {
  /** Milliseconds since the epoch. */
  readonly ts: number;
  readonly model: string;
  /** The request id ('' when the client sent none). */
  readonly id: string;
  readonly event: 'received' | 'completed' | 'cancelled' | 'stopped' | 'error';
  /** Tokens generated (or, for an ensemble or BLS request, forwarded) so far. */
  readonly tokens: number;
  /** `received` only: the request's `guided_decoding_guide_type`, when it carries one. */
  readonly guide?: string;
  readonly protocol: 'grpc' | 'http';
  /** On `received`: the W3C `traceparent` header (gRPC metadata) the client sent, if any. */
  readonly traceparent?: string;
}

/**
 * Failures to inject. Counts are tokens delivered to the client: a fault fires instead of the
 * response that would deliver more than that many. `model` limits the faults to requests for that
 * model (the one the client called). Faults apply to inference requests only.
 */
export interface FakeFaults {
  readonly model?: string;
  /** The model fails: a stream `error_message`, an SSE `{"error"}` event, or an error status. */
  readonly errorAfterTokens?: number;
  /** Destroy the connection (the HTTP/2 session or the HTTP socket). */
  readonly dropConnectionAfterTokens?: number;
  /** Send bytes that are not a protobuf message (gRPC) or an SSE `data:` line that is not JSON (HTTP). */
  readonly malformedAfterTokens?: number;
  /** Streams end without their final response: gRPC ends the call OK, HTTP cuts the stream. */
  readonly omitFinalResponse?: boolean;
  /** Stop sending and keep the connection open. */
  readonly stallAfterTokens?: number;
  /** The next inference request fails with these statuses and message (then the fault is spent). */
  readonly statusOnce?: { readonly grpc: number; readonly http: number; readonly message: string };
}

/** A running fake Triton. */
export interface FakeTriton {
  /** `http://host:port` (or `https://` with TLS), the gRPC endpoint. */
  readonly grpcUrl: string;
  readonly httpUrl: string;
  readonly grpcPort: number;
  readonly httpPort: number;
  /** The events so far (the newest `maxEvents` of them), oldest first. */
  events(): FakeEvent[];
  /** The first event, past or future, that `match` accepts; rejects after `timeoutMs` (default 5000). */
  waitForEvent(match: (e: FakeEvent) => boolean, timeoutMs?: number): Promise<FakeEvent>;
  /** Forgets the events recorded so far, so a test sees only the events it causes. */
  clearEvents(): void;
  /** Replaces the injected faults; `undefined` clears them. */
  setFaults(faults: FakeFaults | undefined): void;
  /** Model requests still running, including generations that outlived a cancelled ensemble call. */
  activeRequests(): number;
  /** Ends every open call and connection and frees both ports. */
  close(): Promise<void>;
}
