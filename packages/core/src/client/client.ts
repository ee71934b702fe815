import { asyncDispose } from '../async-dispose.js';
import { failedCall, invalidArgument, TritonLlmError } from '../errors.js';
import { Generation } from '../generation/generation.js';
import type { GenerateOptions, GenerationContext } from '../generation/options.js';
import { collect, type GenerationStream, StartedStream } from '../generation/stream.js';
import { planBatches } from '../models/batch.js';
import { type EncodedRequest, encodeGenerateRequest } from '../models/encode-request.js';
import { detectSchema, type ModelSchema } from '../models/schema.js';
import type { GenerateRequest } from '../request/request.js';
import { requestId as checkRequestId, validateRequest } from '../request/validate.js';
import type { GenerateResult } from '../result.js';
import { backoff, exhausted, RetryPlan, type RetryPolicy, retryPolicy, withRetry } from '../retry.js';
import type { RequestTelemetry } from '../telemetry/request.js';
import { observer, Telemetry } from '../telemetry/telemetry.js';
import type {
  CallOptions,
  InferRequest,
  InferResponse,
  ModelConfig,
  ModelMetadata,
  ModelStatistics,
  ServerMetadata,
  Transport,
} from '../transport.js';
import { SharedBatchCall } from './batch-call.js';
import { explainModelNotFound } from './model-not-found.js';
import {
  afterSchemaRead,
  type ClientCallOptions,
  checkCallOptionNames,
  checkCallOptions,
  checkClientOptionNames,
  checkDeployed,
  type PreparedCall,
  type TritonLlmOptions,
} from './options.js';
import { generateRequestId } from './request-id.js';
import { runLimited } from './run-limited.js';
import { SharedRead } from './shared-read.js';
import { keepsGeneratingWarning, unmatchableStopWarning } from './warnings.js';

/**
 * The client for a TensorRT-LLM model served by Triton. It reads the deployed model's config once
 * (cached; `refreshSchema()` reloads it), maps typed requests onto the names and data types that
 * model declares, and streams text that is right: deltas from cumulative outputs, no broken
 * characters, client-side stop sequences, finish reasons and timings for every request.
 */
export class TritonLlm {
  readonly model: string;
  private readonly transport: Transport;
  private readonly schemaRead = new SharedRead<ModelSchema>();
  private readonly warned = new Set<string>();
  private readonly retry: RetryPolicy;
  // One function for every generation of this client, rather than a closure per request.
  private readonly warnKeepsGenerating = (model: string, flavor?: string): void =>
    this.warnOnce(`keeps-generating:${model}`, keepsGeneratingWarning(model, flavor));
  private readonly telemetry: Telemetry | undefined;

  constructor(private readonly options: TritonLlmOptions) {
    if (typeof options === 'object' && options !== null) checkClientOptionNames(options);
    if (options?.transport === undefined)
      throw new TritonLlmError('invalid_argument', 'transport: is required', { field: 'transport' });
    if (typeof options.model !== 'string' || options.model.length === 0) {
      throw new TritonLlmError(
        'invalid_argument',
        `model: must be a non-empty string (got ${String(options.model)})`,
        { field: 'model' },
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
    return this.cachedSchema(options).catch(failedCall('schema', this.model));
  }

  /** Forgets the cached schema (after a redeploy) and reads it again. */
  refreshSchema(options?: ClientCallOptions): Promise<ModelSchema> {
    this.schemaRead.forget();
    return this.cachedSchema(options).catch(failedCall('refreshSchema', this.model));
  }

  /** The schema, read once for every caller (see {@link SharedRead}); each caller waits on its own terms. */
  private cachedSchema(options?: ClientCallOptions): Promise<ModelSchema> {
    return this.schemaRead.wait(
      (stop) => {
        // The read takes the first caller's headers and retry, but its own signal; the client's
        // default deadline still bounds it.
        const { signal: _signal, timeoutMs: _timeoutMs, ...shared } = options ?? {};
        return this.loadSchema({ ...shared, signal: stop });
      },
      { signal: options?.signal, timeoutMs: options?.timeoutMs },
      this.model,
    );
  }

  /**
   * Generates and resolves to the whole result. Decoupled models are streamed underneath and
   * collected. Aborting the signal resolves with what arrived and finish reason `cancelled`.
   */
  async generate(request: GenerateRequest, options: GenerateOptions = {}): Promise<GenerateResult> {
    validateRequest(request);
    checkCallOptionNames(options, 'generate');
    try {
      if (this.telemetry === undefined)
        return await collect(await this.start(request, options, false), this.model);
      const telemetry = this.telemetry.begin(request, false);
      return await telemetry.track(
        this.start(request, options, false, telemetry).then((g) => collect(g, this.model)),
      );
    } catch (err) {
      return failedCall('generate', this.model)(err);
    }
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
        { field: 'requests' },
      );
    }
    checkCallOptionNames(options, 'batch');
    const { concurrency, batch, ...generateOptions } = options;
    if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency > 0))
      throw invalidArgument('concurrency', concurrency, 'must be a positive integer');
    if (batch !== undefined && typeof batch !== 'boolean')
      throw invalidArgument('batch', batch, 'must be a boolean');
    requests.forEach((r) => {
      validateRequest(r);
    });
    return this.runBatch(requests, generateOptions, concurrency, batch).catch(
      failedCall('generateBatch', this.model),
    );
  }

  private async runBatch(
    requests: readonly GenerateRequest[],
    generateOptions: GenerateOptions,
    concurrency: number | undefined,
    batch?: boolean,
  ): Promise<GenerateResult[]> {
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
    checkCallOptionNames(options, 'generate');
    const id = request.requestId ?? generateRequestId();
    const telemetry = this.telemetry?.begin(request, true);
    return new StartedStream(
      id,
      this.start({ ...request, requestId: id }, options, true, telemetry).catch(
        failedCall('stream', this.model),
      ),
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
    checkCallOptionNames(options, 'call');
    // An arbitrary model may act on a request more than once: retried only when asked.
    return this.call(options, false, (o) => this.transport.infer({ ...request, id }, o))
      .catch((err: unknown) => this.notFound(err, request.model, options))
      .catch(failedCall('infer', request.model));
  }

  /**
   * {@link TritonLlm.infer}'s streaming counterpart, for any model, decoupled ones included (which
   * refuse unary calls): sends the tensors given (gRPC `ModelStreamInfer`, HTTP
   * `/generate_stream`) and yields each response as it arrives, the last one with `final: true`
   * (over HTTP, where an event stream ends without saying so, that is one more response with no
   * outputs; over gRPC too when the model ends with a flags-only final).
   * Breaking out of `for await`, or aborting `options.signal`, cancels the request on the server
   * (a reading loop then fails with `cancelled`). Over HTTP each input travels as JSON by name, so
   * a tensor JSON cannot carry (more than one dimension besides the batch, bytes that are not
   * UTF-8) fails naming the input before anything is sent; use the gRPC transport for those. Like
   * `infer()`, a failure before the first response is retried only with `retryNonIdempotent`.
   */
  streamInfer(
    request: Omit<InferRequest, 'id'> & { readonly id?: string },
    options?: ClientCallOptions,
  ): AsyncIterable<InferResponse> {
    const id = request.id ?? generateRequestId();
    checkRequestId(id);
    const { merged, policy } = this.callOptions(options);
    // The stream's own plan and the signal (its cancel) are inferStream's, not each attempt's.
    const { signal, retryPlan: _, ...rest } = merged;
    return this.inferStream({ ...request, id }, rest, policy, signal);
  }

  /** The responses of {@link TritonLlm.streamInfer}: attempts until one answers, the signal as cancel. */
  private async *inferStream(
    request: InferRequest,
    options: CallOptions,
    policy: RetryPolicy,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<InferResponse, void, undefined> {
    const ended = (): boolean => signal?.aborted === true;
    const plan = new RetryPlan(policy, { idempotent: false, timeoutMs: options.timeoutMs, ended });
    let delivered = false;
    for (;;) {
      const left = plan.remainingMs();
      // Transports take no signal for a stream: the abort reaches the wire as the stream's cancel().
      const stream = this.transport.stream(request, {
        ...options,
        ...(left !== undefined ? { timeoutMs: Math.max(1, left) } : {}),
        retryPlan: plan,
      });
      const cancel = (): void => stream.cancel();
      if (ended()) cancel();
      else signal?.addEventListener('abort', cancel, { once: true });
      try {
        for await (const response of stream) {
          delivered = true;
          yield response;
        }
        return;
      } catch (err) {
        const decision = plan.decide(err, { delivered, ended: ended() });
        if (decision.action === 'fail') {
          const last = err instanceof TritonLlmError ? exhausted(err, plan.attempts) : err;
          const lookup = signal === undefined ? options : { ...options, signal };
          return await this.notFound(last, request.model, lookup).catch(
            failedCall('streamInfer', request.model),
          );
        }
        if (decision.action === 'wait') await backoff(decision.delayMs, signal);
      } finally {
        signal?.removeEventListener('abort', cancel);
      }
    }
  }

  /** True when the server is live. */
  health(options?: ClientCallOptions): Promise<boolean> {
    return this.call(options, true, (o) => this.transport.serverLive(o)).catch(failedCall('health'));
  }

  /** True when the server is ready for inference. */
  ready(options?: ClientCallOptions): Promise<boolean> {
    return this.call(options, true, (o) => this.transport.serverReady(o)).catch(failedCall('ready'));
  }

  /** True when this client's model is ready. */
  modelReady(options?: ClientCallOptions): Promise<boolean> {
    return this.call(options, true, (o) =>
      this.transport.modelReady(this.model, this.options.modelVersion, o),
    ).catch(failedCall('modelReady', this.model));
  }

  /** The server's name, version and extensions. */
  serverMetadata(options?: ClientCallOptions): Promise<ServerMetadata> {
    return this.call(options, true, (o) => this.transport.serverMetadata(o)).catch(
      failedCall('serverMetadata'),
    );
  }

  /** This model's config as deployed (read fresh; `schema()` is the cached, interpreted view). */
  modelConfig(options?: ClientCallOptions): Promise<ModelConfig> {
    return this.call(options, true, (o) =>
      this.transport.modelConfig(this.model, this.options.modelVersion, o),
    )
      .catch((err: unknown) => this.notFound(err, this.model, options))
      .catch(failedCall('modelConfig', this.model));
  }

  /** This model's inputs and outputs as the server reports them. */
  modelMetadata(options?: ClientCallOptions): Promise<ModelMetadata> {
    return this.call(options, true, (o) =>
      this.transport.modelMetadata(this.model, this.options.modelVersion, o),
    )
      .catch((err: unknown) => this.notFound(err, this.model, options))
      .catch(failedCall('modelMetadata', this.model));
  }

  /** This model's inference statistics. */
  statistics(options?: ClientCallOptions): Promise<ModelStatistics[]> {
    return this.call(options, true, (o) =>
      this.transport.modelStatistics(this.model, this.options.modelVersion, o),
    )
      .catch((err: unknown) => this.notFound(err, this.model, options))
      .catch(failedCall('statistics', this.model));
  }

  /** Closes the transport's connections. */
  close(): Promise<void> {
    return this.transport.close();
  }

  /** `await using llm = new TritonLlm(...)`: {@link TritonLlm.close} when the scope ends. */
  [asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Rethrows `err`, naming the server's models when it says `model` is not found (issue 53). */
  private async notFound(
    err: unknown,
    model: string,
    options: ClientCallOptions | undefined,
  ): Promise<never> {
    const index = this.transport.repositoryIndex;
    throw await explainModelNotFound(
      err,
      model,
      index === undefined ? undefined : () => this.call(options, true, (o) => index.call(this.transport, o)),
    );
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
    const { merged, policy } = this.callOptions(options);
    return withRetry(policy, idempotent, merged, run);
  }

  /** A call's options over the client's defaults (the call's own win), checked, and its retry policy. */
  private callOptions(options: ClientCallOptions | undefined): {
    readonly merged: CallOptions;
    readonly policy: RetryPolicy;
  } {
    checkCallOptionNames(options, 'call');
    const { retry, ...rest } = options ?? {};
    const defaults = this.options.defaults;
    const merged: CallOptions = {
      ...(defaults?.timeoutMs !== undefined ? { timeoutMs: defaults.timeoutMs } : {}),
      ...(defaults?.headers !== undefined ? { headers: defaults.headers } : {}),
      ...rest,
    };
    checkCallOptions(merged, '');
    return { merged, policy: retry === undefined ? this.retry : retryPolicy(this.options.retry, retry) };
  }

  private async loadSchema(options?: ClientCallOptions): Promise<ModelSchema> {
    const config = await this.call(options, true, (o) =>
      this.transport.modelConfig(this.model, this.options.modelVersion, o),
    ).catch((err: unknown) => this.notFound(err, this.model, options));
    const schema = detectSchema(config);
    checkDeployed(schema, this.model, { flavor: this.options.flavor });
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
    checkDeployed(call.schema, this.model, { streaming });
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
    const merged: GenerateOptions = { ...this.options.defaults, ...options };
    checkCallOptions(merged, '');
    const retry = options.retry === undefined ? this.retry : retryPolicy(this.options.retry, options.retry);
    const started = performance.now();
    const schema = await this.cachedSchema({
      ...(merged.signal !== undefined ? { signal: merged.signal } : {}),
      ...(merged.timeoutMs !== undefined ? { timeoutMs: merged.timeoutMs } : {}),
      ...(merged.headers !== undefined ? { headers: merged.headers } : {}),
      ...(options.retry !== undefined ? { retry: options.retry } : {}),
    });
    return { schema, options: afterSchemaRead(merged, started, this.model), retry };
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
      call.retry,
      true,
      {
        signal,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(headers !== undefined ? { headers } : {}),
      },
      (o) => this.transport.infer(request, o),
    );
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    (this.options.logger ?? console).warn(message);
  }

  /** Said once per client and model (see {@link unmatchableStopWarning}). */
  private warnUnmatchableStops(schema: ModelSchema, request: GenerateRequest, streaming: boolean): void {
    const warning = unmatchableStopWarning(schema, request, streaming);
    if (warning !== undefined) this.warnOnce(`per-token-stops:${schema.model}`, warning);
  }
}
