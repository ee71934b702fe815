import { createTraceState, INVALID_SPAN_CONTEXT, trace } from '@opentelemetry/api';
import { injectW3cTraceContext } from '@trtllm/sdk/transport';
import { describe, expect, it } from 'vitest';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const spanId = '00f067aa0ba902b7';

describe('injectW3cTraceContext', () => {
  it('writes traceparent with the sampled flag and tracestate when the span carries one', () => {
    const span = trace.wrapSpanContext({
      traceId,
      spanId,
      traceFlags: 1,
      traceState: createTraceState('vendor=abc,other=1'),
    });
    const headers: Record<string, string> = { authorization: 'Bearer x' };
    injectW3cTraceContext(span, headers);
    expect(headers).toEqual({
      authorization: 'Bearer x',
      traceparent: `00-${traceId}-${spanId}-01`,
      tracestate: 'vendor=abc,other=1',
    });
  });

  it('writes an unsampled span as flags 00 and no tracestate without one', () => {
    const headers: Record<string, string> = {};
    injectW3cTraceContext(trace.wrapSpanContext({ traceId, spanId, traceFlags: 0 }), headers);
    expect(headers).toEqual({ traceparent: `00-${traceId}-${spanId}-00` });
  });

  it('writes nothing for the invalid context a no-op tracer hands out', () => {
    const headers: Record<string, string> = {};
    injectW3cTraceContext(trace.wrapSpanContext(INVALID_SPAN_CONTEXT), headers);
    expect(headers).toEqual({});
  });
});
