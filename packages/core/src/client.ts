import { SharedBatchCall } from './batch-call.js';
import { invalidArgument, TritonLlmError } from './errors.js';
import {
  type GenerateOptions,
  Generation,
  type GenerationContext,
  type GenerationEvent,
} from './generation.js';
import { planBatches } from './models/batch.js';
import { type EncodedRequest, encodeGenerateRequest } from './models/encode-request.js';
import type { GenerateRequest, ModelFlavor } from './request.js';
import type { GenerateResult, StreamChunk } from './result.js';
import { type RetryOptions, type RetryPolicy, retryPolicy, withRetry } from './retry.js';
import { detectSchema, type ModelSchema } from './schema.js';
import { observer, Telemetry, type TelemetryOptions } from './telemetry.js';
import type { RequestTelemetry } from './telemetry-request.js';
import type { Tokenizer } from './tokenizer.js';
import type {
  CallOptions,
  InferRequest,
  InferResponse,
  ModelConfig,
  ModelMetadata,
  ModelStatistics,
  ServerMetadata,
  Transport,
} from './transport.js';
import { requestId as checkRequestId, validateRequest } from './validate.js';

/** Options of {@link TritonLlm}. */
export interface TritonLlmOptions {
  /** `grpcTransport(...)` from `@trtllm/grpc` or `httpTransport(...)` from `@trtllm/http`. */
  readonly transport: Transport;
  /** The deployed model's name: `ensemble`, `tensorrt_llm_bls`, `tensorrt_llm`, ... */
  readonly model: string;
  /** Pin a model version; the server picks when absent. */
  readonly modelVersion?: string;
  /** Expected flavor; when given, a deployed model of another flavor is refused with a clear error. */
  readonly flavor?: ModelFlavor;
  /** Turns text into ids for the raw `tensorrt_llm` model (see `@trtllm/tokenizers`). */
  readonly tokenizer?: Tokenizer;
  /**
   * Defaults for every call (per-call options win): `timeoutMs` and `headers` apply to every
   * request of this client, `idleTimeoutMs` to generation.
   */
  readonly defaults?: Pick<GenerateOptions, 'timeoutMs' | 'idleTimeoutMs' | 'headers'>;
  /**
   * Retries of calls that fail before the server answers (see {@link RetryOptions}); on by
   * default with 3 attempts. Calls can override it field by field.
   */
  readonly retry?: RetryOptions;
  /** Where warnings go (one per client and model when an early end cannot stop the server). Default: console.warn. */
  readonly logger?: {
    /** Receives one human-readable warning; must not throw. */
    warn(message: string): void;
  };
  /** Observes every request's lifecycle: a hook for logging, metrics and tracing. */
  readonly onEvent?: (event: GenerationEvent) => void;
  /** OpenTelemetry spans and GenAI metrics, off until a tracer or meter is given (see {@link TelemetryOptions}). */
  readonly telemetry?: TelemetryOptions;
}

/** Options of the client's unary calls (health, metadata, config, statistics, infer). */
export interface ClientCallOptions extends CallOptions {
  /** Retries of this call, field by field over the client's `retry`. */
  readonly retry?: RetryOptions;
}

/** A running streamed request: iterate it for chunks; `stop()` ends it gracefully. */
export interface GenerationStream extends AsyncIterable<StreamChunk> {
  readonly requestId: string;
  /** Graceful early stop: the backend's in-band stop where the model has one (see the README table). */
  stop(): Promise<void>;
}

let nextId = Math.floor(Math.random() * 1_000_000_000);

/** Numeric ids: the TRT-LLM stop path historically required a numeric request id. */
function generateRequestId(): string {
  nextId = (nextId + 1) % Number.MAX_SAFE_INTEGER;
  return String(nextId);
}

/**
 * The client for a TensorRT-LLM model served by Triton. It reads the deployed model's config once
 * (cached; `refreshSchema()` reloads it), maps typed requests onto the names and data types that
 * model declares, and streams text that is right: deltas from cumulative outputs, no broken
 * characters, client-side stop sequences, finish reasons and timings for every request.
 */
export class TritonLlm {
  readonly model: string;
  private readonly transport: Transport;
  private schemaPromise: Promise<ModelSchema> | undefined;
  private readonly warned = new Set<string>();
  private readonly retry: RetryPolicy;
  // One function for every generation of this client, rather than a closure per request.
  private readonly warnKeepsGenerating = (model: string): void =>
    this.warnOnce(
      `keeps-generating:${model}`,
      `[@trtllm/sdk] a request to '${model}' was ended early, but this model cannot stop its generation on the server: ` +
        'Triton ensembles and the BLS model keep generating to max_tokens after a cancel. To free the GPU, call the raw ' +
        'tensorrt_llm model with a tokenizer (TritonLlm({ model: "tensorrt_llm", tokenizer })), which honours the in-band stop.',
    );
  private readonly telemetry: Telemetry | undefined;

  constructor(private readonly options: TritonLlmOptions) {
    if (options?.transport === undefined)
      throw new TritonLlmError('invalid_argument', 'transport: is required');
    if (typeof options.model !== 'string' || options.model.length === 0) {
      throw new TritonLlmError(
        'invalid_argument',
        `model: must be a non-empty string (got ${String(options.model)})`,
      );
    }
    this.transport = options.transport;
    this.model = options.model;
    this.retry = retryPolicy(options.retry);
    checkCallOptions(options.defaults ?? {}, 'defaults.');
    this.telemetry = Telemetry.create(options.telemetry, options.model);
  }

  /** The deployed model's schema (flavor, backend version, decoupled, batch size), read once and cached. */
  schema(options?: ClientCallOptions): Promise<ModelSchema> {
    this.schemaPromise ??= this.loadSchema(options).catch((err: unknown) => {
      this.schemaPromise = undefined;
      throw err;
    });
    return this.schemaPromise;
  }

  /** Forgets the cached schema (after a redeploy) and reads it again. */
  refreshSchema(options?: ClientCallOptions): Promise<ModelSchema> {
    this.schemaPromise = undefined;
    return this.schema(options);
  }

  /**
   * Generates and resolves to the whole result. Decoupled models are streamed underneath and
   * collected. Aborting the signal resolves with what arrived and finish reason `cancelled`.
   */
  async generate(request: GenerateRequest, options: GenerateOptions = {}): Promise<GenerateResult> {
    validateRequest(request);
    if (this.telemetry === undefined) return collect(await this.start(request, options, false), this.model);
    const telemetry = this.telemetry.begin(request, false);
    return telemetry.track(
      this.start(request, options, false, telemetry).then((g) => collect(g, this.model)),
    );
  }

  /**
   * Several prompts (or id lists), results in input order. Where the deployed model takes batches
   * in one request (not decoupled, `max_batch_size` > 1), requests that send the same inputs go
   * together as batched requests of at most `max_batch_size` items (`concurrency` of them at a
   * time, default 2: one running, one queued on the server). Otherwise, or with `batch: false`,
   * each request is sent alone, at most `concurrency` at a time (default `max_batch_size`), and
   * Triton's in-flight batcher batches them. A batched request is one request on the server: it is
   * cancelled there only when every item in it is, and results of one batch share its request id.
   */
  async generateBatch(
    requests: readonly GenerateRequest[],
    options: GenerateOptions & { readonly concurrency?: number; readonly batch?: boolean } = {},
  ): Promise<GenerateResult[]> {
    if (!Array.isArray(requests) || requests.length === 0) {
      throw new TritonLlmError(
        'invalid_argument',
        `requests: must be a non-empty array (got ${String(requests)})`,
      );
    }
    const { concurrency, batch, ...generateOptions } = options;
    if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency > 0))
      throw invalidArgument('concurrency', concurrency, 'must be a positive integer');
    if (batch !== undefined && typeof batch !== 'boolean')
      throw invalidArgument('batch', batch, 'must be a boolean');
    requests.forEach((r) => {
      validateRequest(r);
    });
    const call = await this.prepare(generateOptions);
    const { schema } = call;
    const results: GenerateResult[] = new Array(requests.length);
    if (batch === false || schema.decoupled || schema.maxBatchSize <= 1) {
      const limit = concurrency ?? Math.max(1, schema.maxBatchSize);
      await runLimited(requests.length, limit, async (i) => {
        results[i] = await this.generate(requests[i]!, generateOptions);
      });
      return results;
    }
    // Everything is encoded before anything is sent: an option the model lacks fails the whole call.
    const encoded = requests.map((r) => this.encode(schema, r, false));
    const groups = planBatches(
      encoded,
      schema.maxBatchSize,
      requests.map((r) => r.requestId !== undefined),
    );
    // Retries belong to the shared call: an item must not resend the batch on its own.
    const once = { ...call.retry, attempts: 1 };
    await runLimited(groups.length, concurrency ?? 2, async (g) => {
      const group = groups[g]!;
      const shared = new SharedBatchCall(group.members.length, (signal) =>
        this.sendBatch(group.request, call, signal),
      );
      await Promise.all(
        group.members.map(async (i, k) => {
          const item = { ...encoded[i]!, request: { ...encoded[i]!.request, id: group.request.id } };
          // Each item gets its own span; the shared request carries no single item's trace context.
          const telemetry = this.telemetry?.begin(requests[i]!, false);
          const generation = this.generation(
            call,
            requests[i]!,
            item,
            false,
            { retry: once, unary: (o) => shared.row(k, o.signal) },
            telemetry,
          );
          const collecting = collect(generation, this.model);
          results[i] = await (telemetry === undefined ? collecting : telemetry.track(collecting));
        }),
      );
    });
    return results;
  }

  /**
   * Streams a request. Breaking out of `for await` cancels it; the stream always ends with a
   * final chunk (`done: true`) carrying finish reason, usage and timings. The model must be
   * decoupled (deployed with `decoupled_mode: true`).
   */
  stream(request: GenerateRequest, options: GenerateOptions = {}): GenerationStream {
    // Validation is synchronous so that bad input throws at the call, before anything is sent.
    validateRequest(request);
    const id = request.requestId ?? generateRequestId();
    const telemetry = this.telemetry?.begin(request, true);
    return new StartedStream(
      id,
      this.start({ ...request, requestId: id }, options, true, telemetry),
      telemetry,
    );
  }

  /** Escape hatch for any model: named tensors in, named tensors out (unary `ModelInfer` / `/infer`). */
  infer(
    request: Omit<InferRequest, 'id'> & { readonly id?: string },
    options?: ClientCallOptions,
  ): Promise<InferResponse> {
    const id = request.id ?? generateRequestId();
    checkRequestId(id);
    // An arbitrary model may act on a request more than once: retried only when asked.
    return this.call(options, false, (o) => this.transport.infer({ ...request, id }, o));
  }

  /** True when the server is live. */
  health(options?: ClientCallOptions): Promise<boolean> {
    return this.call(options, true, (o) => this.transport.serverLive(o));
  }

  /** True when the server is ready for inference. */
  ready(options?: ClientCallOptions): Promise<boolean> {
    return this.call(options, true, (o) => this.transport.serverReady(o));
  }

  /** True when this client's model is ready. */
  modelReady(options?: ClientCallOptions): Promise<boolean> {
    return this.call(options, true, (o) =>
      this.transport.modelReady(this.model, this.options.modelVersion, o),
    );
  }

  /** The server's name, version and extensions. */
  serverMetadata(options?: ClientCallOptions): Promise<ServerMetadata> {
    return this.call(options, true, (o) => this.transport.serverMetadata(o));
  }

  /** This model's config as deployed (read fresh; `schema()` is the cached, interpreted view). */
  modelConfig(options?: ClientCallOptions): Promise<ModelConfig> {
    return this.call(options, true, (o) =>
      this.transport.modelConfig(this.model, this.options.modelVersion, o),
    );
  }

  /** This model's inputs and outputs as the server reports them. */
  modelMetadata(options?: ClientCallOptions): Promise<ModelMetadata> {
    return this.call(options, true, (o) =>
      this.transport.modelMetadata(this.model, this.options.modelVersion, o),
    );
  }

  /** This model's inference statistics. */
  statistics(options?: ClientCallOptions): Promise<ModelStatistics[]> {
    return this.call(options, true, (o) =>
      this.transport.modelStatistics(this.model, this.options.modelVersion, o),
    );
  }

  /** Closes the transport's connections. */
  close(): Promise<void> {
    return this.transport.close();
  }

  /**
   * One unary call with the client's defaults and retry policy; the call's own options win. The
   * deadline covers every attempt.
   */
  private async call<T>(
    options: ClientCallOptions | undefined,
    idempotent: boolean,
    run: (options: CallOptions) => Promise<T>,
  ): Promise<T> {
    const { retry, ...rest } = options ?? {};
    const defaults = this.options.defaults;
    const merged: CallOptions = {
      ...(defaults?.timeoutMs !== undefined ? { timeoutMs: defaults.timeoutMs } : {}),
      ...(defaults?.headers !== undefined ? { headers: defaults.headers } : {}),
      ...rest,
    };
    checkCallOptions(merged, '');
    const policy = retry === undefined ? this.retry : retryPolicy(this.options.retry, retry);
    const { signal, timeoutMs } = merged;
    return withRetry((left) => run(left === undefined ? merged : { ...merged, timeoutMs: left }), policy, {
      idempotent,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(signal !== undefined ? { signal } : {}),
    });
  }

  private async loadSchema(options?: ClientCallOptions): Promise<ModelSchema> {
    const config = await this.call(options, true, (o) =>
      this.transport.modelConfig(this.model, this.options.modelVersion, o),
    );
    const schema = detectSchema(config);
    if (this.options.flavor !== undefined && this.options.flavor !== schema.flavor) {
      throw new TritonLlmError(
        'failed_precondition',
        `model '${this.model}' is deployed as flavor '${schema.flavor}', not '${this.options.flavor}'`,
        { model: this.model },
      );
    }
    return schema;
  }

  private async start(
    request: GenerateRequest,
    options: GenerateOptions,
    streaming: boolean,
    telemetry?: RequestTelemetry,
  ): Promise<Generation> {
    // The callers validated `request` already, synchronously, so that bad input throws at the call.
    const call = await this.prepare(telemetry === undefined ? options : this.traced(options, telemetry));
    if (streaming && !call.schema.decoupled) {
      throw new TritonLlmError(
        'failed_precondition',
        `model '${this.model}' is not decoupled; streaming needs the model deployed with decoupled_mode: true ` +
          '(model_transaction_policy { decoupled: true }), or call generate()',
        { model: this.model },
      );
    }
    const encoded = this.encode(call.schema, request, streaming);
    this.warnUnmatchableStops(call.schema, request, streaming);
    return this.generation(call, request, encoded, streaming, undefined, telemetry);
  }

  /** The call's options with the request span's trace context added to its headers. */
  private traced(options: GenerateOptions, telemetry: RequestTelemetry): GenerateOptions {
    const headers = telemetry.headers(options.headers ?? this.options.defaults?.headers);
    return headers === undefined ? options : { ...options, headers };
  }

  /**
   * Merges the call's options over the client's defaults, reads the schema, and leaves in
   * `timeoutMs` what the schema read did not use: the deadline covers both.
   */
  private async prepare(options: GenerateOptions): Promise<PreparedCall> {
    let merged: GenerateOptions = { ...this.options.defaults, ...options };
    checkCallOptions(merged, '');
    const retry = options.retry === undefined ? this.retry : retryPolicy(this.options.retry, options.retry);
    const started = performance.now();
    const schema = await this.schema({
      ...(merged.signal !== undefined ? { signal: merged.signal } : {}),
      ...(merged.timeoutMs !== undefined ? { timeoutMs: merged.timeoutMs } : {}),
      ...(merged.headers !== undefined ? { headers: merged.headers } : {}),
      ...(options.retry !== undefined ? { retry: options.retry } : {}),
    });
    if (merged.timeoutMs !== undefined) {
      const left = merged.timeoutMs - (performance.now() - started);
      if (left <= 0) {
        throw new TritonLlmError(
          'deadline_exceeded',
          `the ${merged.timeoutMs} ms deadline passed while reading the model config`,
          { model: this.model },
        );
      }
      merged = { ...merged, timeoutMs: left };
    }
    return { schema, options: merged, retry };
  }

  private encode(schema: ModelSchema, request: GenerateRequest, streaming: boolean): EncodedRequest {
    return encodeGenerateRequest(request, {
      schema,
      requestId: request.requestId ?? generateRequestId(),
      streaming,
      protocol: this.transport.protocol,
      ...(this.options.tokenizer !== undefined ? { tokenizer: this.options.tokenizer } : {}),
    });
  }

  private generation(
    call: PreparedCall,
    request: GenerateRequest,
    encoded: EncodedRequest,
    streaming: boolean,
    shared?: Pick<GenerationContext, 'unary' | 'retry'>,
    telemetry?: RequestTelemetry,
  ): Generation {
    const observe =
      telemetry === undefined ? this.options.onEvent : observer(telemetry, this.options.onEvent);
    return new Generation({
      transport: this.transport,
      schema: call.schema,
      request,
      encoded,
      streaming,
      tokenizer: this.options.tokenizer,
      options: call.options,
      retry: call.retry,
      warnServerKeepsGenerating: this.warnKeepsGenerating,
      ...(observe !== undefined ? { observe } : {}),
      ...shared,
    });
  }

  /** A batched request under the call's retry policy and deadline. */
  private sendBatch(request: InferRequest, call: PreparedCall, signal: AbortSignal): Promise<InferResponse> {
    const { timeoutMs, headers } = call.options;
    return withRetry(
      (left) =>
        this.transport.infer(request, {
          signal,
          ...(left !== undefined ? { timeoutMs: left } : {}),
          ...(headers !== undefined ? { headers } : {}),
        }),
      call.retry,
      { idempotent: true, signal, ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
    );
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    (this.options.logger ?? console).warn(message);
  }

  /**
   * A text model that streams one token per response decodes each token alone: a character split
   * over several tokens arrives as U+FFFD, so a stop string holding one can be neither matched nor
   * trimmed on the client (issue 28). Said once per client and model.
   */
  private warnUnmatchableStops(schema: ModelSchema, request: GenerateRequest, streaming: boolean): void {
    if (!streaming || schema.cumulativeText || (schema.flavor !== 'ensemble' && schema.flavor !== 'bls'))
      return;
    const stop = request.stopWords?.find((s) => NON_ASCII.test(s));
    if (stop === undefined) return;
    this.warnOnce(
      `per-token-stops:${schema.model}`,
      `[@trtllm/sdk] stop string ${JSON.stringify(stop)} may never match on '${schema.model}': it streams one token per ` +
        'response, decoded alone, so a character split over several tokens arrives as U+FFFD and is neither matched nor ' +
        'trimmed on the client. For exact streamed text use tensorrt_llm_bls with accumulate_tokens: true, or the raw ' +
        'tensorrt_llm model with a tokenizer (TritonLlm({ model: "tensorrt_llm", tokenizer })).',
    );
  }
}

// Any character outside ASCII: byte-level tokenizers may split it over several tokens.
const NON_ASCII = /[\u0080-\uffff]/;

/** Deadlines must be positive milliseconds: a zero or negative one would fail every call at once. */
function checkCallOptions(options: { timeoutMs?: number; idleTimeoutMs?: number }, prefix: string): void {
  for (const field of ['timeoutMs', 'idleTimeoutMs'] as const) {
    const value = options[field];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
      throw invalidArgument(`${prefix}${field}`, value, 'must be a positive number of milliseconds');
    }
  }
}

/** The options of one call, resolved against the client's, and the schema they apply to. */
interface PreparedCall {
  readonly schema: ModelSchema;
  readonly options: GenerateOptions;
  readonly retry: RetryPolicy;
}

/** Iterates a generation to its end and returns its result. */
async function collect(generation: Generation, model: string): Promise<GenerateResult> {
  let result: GenerateResult | undefined;
  for await (const chunk of generation) if (chunk.done) result = chunk.result;
  if (result === undefined) {
    throw new TritonLlmError('protocol', 'the request ended without a result', {
      requestId: generation.requestId,
      model,
    });
  }
  return result;
}

/** Runs `task(0..count-1)` with at most `limit` running at once. */
async function runLimited(count: number, limit: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}

/**
 * What `stream()` returns: the request starts at once (schema, encoding), and iteration hands out
 * the generation's chunks. A class rather than closures: an idle stream costs one small object.
 */
class StartedStream implements GenerationStream, AsyncIterator<StreamChunk> {
  private generation: Generation | undefined;
  private inner: AsyncIterator<StreamChunk> | undefined;
  private stopRequested = false;
  private readonly starting: Promise<Generation>;

  constructor(
    readonly requestId: string,
    started: Promise<Generation>,
    private readonly telemetry: RequestTelemetry | undefined,
  ) {
    this.starting = started.then((g) => {
      this.generation = g;
      if (this.stopRequested) void g.stop();
      return g;
    });
    // Keep an unconsumed failure from becoming an unhandled rejection; iteration rethrows it.
    this.starting.catch((err: unknown) => telemetry?.fail(err));
  }

  async stop(): Promise<void> {
    this.stopRequested = true;
    await this.generation?.stop();
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamChunk> {
    return this;
  }

  next(): Promise<IteratorResult<StreamChunk>> {
    const inner = this.inner;
    if (inner !== undefined) return inner.next();
    return this.starting.then((g) => {
      const first = g[Symbol.asyncIterator]();
      this.inner = first;
      // A failure before the request is sent (an already aborted signal) has no error event.
      return this.telemetry !== undefined ? this.telemetry.track(first.next()) : first.next();
    });
  }

  async return(): Promise<IteratorResult<StreamChunk>> {
    const inner = this.inner;
    if (inner === undefined) {
      // Left before the first chunk: the request may already be on its way.
      const g = await this.starting.catch(() => undefined);
      if (g !== undefined) await g[Symbol.asyncIterator]().return?.();
      this.telemetry?.abandon();
      return { done: true, value: undefined };
    }
    const done = (await inner.return?.()) ?? { done: true as const, value: undefined };
    this.telemetry?.abandon();
    return done;
  }
}
