import type { TelemetrySpan } from './api.js';

/**
 * Writes a span's context into request headers. The default writes W3C Trace Context, the format
 * Triton's OpenTelemetry tracing reads from HTTP headers and gRPC metadata. Pass your own to use a
 * registered propagator (B3, baggage): `span` is the api `Span` your tracer created, typed by the
 * SDK's own {@link TelemetrySpan}, so
 * `(span, headers) => propagation.inject(trace.setSpan(context.active(), span as Span), headers)`.
 */
export type TraceContextInjector = (span: TelemetrySpan, headers: Record<string, string>) => void;

const INVALID_TRACE = /^0+$/;

/** W3C `traceparent` (and `tracestate` when the span carries one), built from the span itself. */
export const injectW3cTraceContext: TraceContextInjector = (span, headers) => {
  const { traceId, spanId, traceFlags, traceState } = span.spanContext();
  // A no-op tracer hands out the all-zero context: sending it would claim a trace that is not there.
  if (INVALID_TRACE.test(traceId) || INVALID_TRACE.test(spanId)) return;
  headers.traceparent = `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
  const state = traceState?.serialize();
  if (state !== undefined && state.length > 0) headers.tracestate = state;
};
