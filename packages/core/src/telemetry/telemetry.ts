import { invalidArgument } from '../errors.js';
import type { GenerationEvent } from '../generation/events.js';
import type { GenerateRequest } from '../request/request.js';
import type { TelemetryAttributes, TelemetryMeter, TelemetryTracer } from './api.js';
import { baseAttributes, requestAttributes } from './attributes.js';
import { GenAiMetrics } from './metrics.js';
import { RequestTelemetry } from './request.js';
import { injectW3cTraceContext, type TraceContextInjector } from './trace-context.js';

// `SpanKind.CLIENT` of the api, written out so core never loads it.
const CLIENT = 2;

/**
 * OpenTelemetry for `TritonLlm` (`new TritonLlm({ ..., telemetry: { tracer, meter } })`), off
 * until a tracer or a meter is given. `tracer` records one span per `generate()` / `stream()`
 * request (and per item of `generateBatch()`), named and attributed by the OpenTelemetry GenAI
 * semantic conventions; `meter` records the GenAI client histograms. Both come from your own
 * OpenTelemetry setup (`trace.getTracer('my-service')`, `metrics.getMeter('my-service')`); the SDK
 * calls only what {@link TelemetryTracer} and {@link TelemetryMeter} declare and never loads
 * `@opentelemetry/api` itself.
 */
export interface TelemetryOptions {
  /** Records a span per request (kind CLIENT, `text_completion {model}`), child of the active span. */
  readonly tracer?: TelemetryTracer;
  /** Records `gen_ai.client.operation.duration`, `gen_ai.client.token.usage` and the streaming chunk timings. */
  readonly meter?: TelemetryMeter;
  /**
   * How the span's context reaches Triton in the call's headers (gRPC metadata): W3C
   * `traceparent` / `tracestate` by default, your own injector, or `false` for none.
   */
  readonly propagate?: false | TraceContextInjector;
  /**
   * The server's URL, for the `server.address` / `server.port` attributes (transports do not
   * expose theirs; with replicas, the name of the service in front of them).
   */
  readonly serverUrl?: string;
  /**
   * `gen_ai.operation.name` and the first word of the span name. Default `text_completion`: a
   * prompt in, raw text out. A caller that renders a chat template into the prompt (the AI SDK
   * provider, the LangChain model) reports `chat`.
   */
  readonly operationName?: 'text_completion' | 'chat';
}

/** One client's telemetry: its instruments and the attributes every request shares. */
export class Telemetry {
  private readonly metrics: GenAiMetrics | undefined;
  private readonly attributes: TelemetryAttributes;
  private readonly inject: TraceContextInjector | undefined;
  private readonly spanName: string;

  private constructor(
    private readonly options: TelemetryOptions,
    model: string,
  ) {
    this.metrics = options.meter !== undefined ? new GenAiMetrics(options.meter) : undefined;
    const operation = options.operationName ?? 'text_completion';
    this.attributes = baseAttributes(model, operation, options.serverUrl);
    this.spanName = `${operation} ${model}`;
    this.inject = options.propagate === false ? undefined : (options.propagate ?? injectW3cTraceContext);
  }

  /** The client's telemetry, or undefined (and nothing on any request's path) when neither is given. */
  static create(options: TelemetryOptions | undefined, model: string): Telemetry | undefined {
    if (options === undefined) return undefined;
    if (typeof options !== 'object' || options === null)
      throw invalidArgument('telemetry', options, 'must be an object with a tracer and/or a meter');
    const { tracer, meter, propagate, serverUrl, operationName } = options;
    if (tracer !== undefined && typeof tracer?.startSpan !== 'function')
      throw invalidArgument('telemetry.tracer', tracer, 'must be an OpenTelemetry Tracer');
    if (meter !== undefined && typeof meter?.createHistogram !== 'function')
      throw invalidArgument('telemetry.meter', meter, 'must be an OpenTelemetry Meter');
    if (propagate !== undefined && propagate !== false && typeof propagate !== 'function')
      throw invalidArgument('telemetry.propagate', propagate, 'must be false or a function');
    if (serverUrl !== undefined && !URL.canParse(serverUrl))
      throw invalidArgument('telemetry.serverUrl', serverUrl, 'must be a URL');
    if (operationName !== undefined && operationName !== 'text_completion' && operationName !== 'chat')
      throw invalidArgument('telemetry.operationName', operationName, "must be 'text_completion' or 'chat'");
    if (tracer === undefined && meter === undefined) return undefined;
    return new Telemetry(options, model);
  }

  /** Starts one request's span (a child of the active context) and its clock. */
  begin(request: GenerateRequest, streaming: boolean): RequestTelemetry {
    const span = this.options.tracer?.startSpan(this.spanName, {
      kind: CLIENT,
      attributes: { ...this.attributes, ...requestAttributes(request, streaming) },
    });
    return new RequestTelemetry({
      span,
      metrics: this.metrics,
      inject: this.inject,
      attributes: this.attributes,
      streaming,
    });
  }
}

/** The generation's observer: the request's telemetry first, then the user's `onEvent`. */
export function observer(
  telemetry: RequestTelemetry,
  onEvent: ((event: GenerationEvent) => void) | undefined,
): (event: GenerationEvent) => void {
  if (onEvent === undefined) return (event) => telemetry.observe(event);
  return (event) => {
    telemetry.observe(event);
    onEvent(event);
  };
}
