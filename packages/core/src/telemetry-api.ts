// The parts of OpenTelemetry's Tracer, Span and Meter that the SDK calls, declared here so that
// core's types need no `@opentelemetry/api`: a TypeScript app without it (and with
// `skipLibCheck: false`) still compiles. The api's own objects fit these shapes.

/** An attribute value, as OpenTelemetry takes it. */
export type TelemetryAttributeValue = string | number | boolean | string[] | number[] | boolean[];

/** Span or metric attributes by name. */
export type TelemetryAttributes = Record<string, TelemetryAttributeValue | undefined>;

/** What identifies a span across processes: the fields W3C Trace Context carries. */
export interface TelemetrySpanContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly traceState?: { serialize(): string };
}

/** The span methods the SDK calls; an OpenTelemetry `Span` has them all. */
export interface TelemetrySpan {
  spanContext(): TelemetrySpanContext;
  setAttribute(key: string, value: TelemetryAttributeValue): unknown;
  setAttributes(attributes: TelemetryAttributes): unknown;
  addEvent(name: string, attributes?: TelemetryAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error): unknown;
  end(): void;
}

/** An OpenTelemetry `Tracer` (`trace.getTracer(name)`), as the SDK uses it. */
export interface TelemetryTracer {
  startSpan(name: string, options?: { kind?: number; attributes?: TelemetryAttributes }): TelemetrySpan;
}

/** A histogram instrument, as the SDK records into it. */
export interface TelemetryHistogram {
  record(value: number, attributes?: TelemetryAttributes): void;
}

/** An OpenTelemetry `Meter` (`metrics.getMeter(name)`), as the SDK uses it. */
export interface TelemetryMeter {
  createHistogram(
    name: string,
    options?: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } },
  ): TelemetryHistogram;
}
