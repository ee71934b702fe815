// The parts of OpenTelemetry's Tracer, Span and Meter that the SDK calls, declared here so that
// core's types need no `@opentelemetry/api`: a TypeScript app without it (and with
// `skipLibCheck: false`) still compiles. The api's own objects fit these shapes.

/** An attribute value, as OpenTelemetry takes it. */
export type TelemetryAttributeValue = string | number | boolean | string[] | number[] | boolean[];

/** Span or metric attributes by name. */
export type TelemetryAttributes = Record<string, TelemetryAttributeValue | undefined>;

/** A span's W3C trace state, as the SDK reads it. */
export interface TelemetryTraceState {
  /** The `tracestate` header value. */
  serialize(): string;
}

/** What identifies a span across processes: the fields W3C Trace Context carries. */
export interface TelemetrySpanContext {
  /** 32 lowercase hex digits; all zeros for a span that is not recorded anywhere. */
  readonly traceId: string;
  /** 16 lowercase hex digits. */
  readonly spanId: string;
  /** Bit 0 is "sampled". */
  readonly traceFlags: number;
  /** Vendor entries that travel with the trace. */
  readonly traceState?: TelemetryTraceState;
}

/** The span methods the SDK calls; an OpenTelemetry `Span` has them all. */
export interface TelemetrySpan {
  /** The span's identity, written into the request's headers. */
  spanContext(): TelemetrySpanContext;
  /** Sets one attribute. */
  setAttribute(key: string, value: TelemetryAttributeValue): unknown;
  /** Sets several attributes. */
  setAttributes(attributes: TelemetryAttributes): unknown;
  /** Adds a timestamped event (a retry, trace context that could not be sent). */
  addEvent(name: string, attributes?: TelemetryAttributes): unknown;
  /** Sets the status; the SDK sets only ERROR (2), with the error's message. */
  setStatus(status: { code: number; message?: string }): unknown;
  /** Records the error a request failed with as an `exception` event. */
  recordException(exception: Error): unknown;
  /** Ends the span; the SDK ends each span once. */
  end(): void;
}

/** An OpenTelemetry `Tracer` (`trace.getTracer(name)`), as the SDK uses it. */
export interface TelemetryTracer {
  /** Starts a span as a child of the active context; the SDK passes kind CLIENT (2). */
  startSpan(name: string, options?: { kind?: number; attributes?: TelemetryAttributes }): TelemetrySpan;
}

/** A histogram instrument, as the SDK records into it. */
export interface TelemetryHistogram {
  /** Records one measurement. */
  record(value: number, attributes?: TelemetryAttributes): void;
}

/** An OpenTelemetry `Meter` (`metrics.getMeter(name)`), as the SDK uses it. */
export interface TelemetryMeter {
  /** Creates a histogram; the SDK passes the GenAI conventions' units and bucket advice. */
  createHistogram(
    name: string,
    options?: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } },
  ): TelemetryHistogram;
}
