import type { Attributes } from '@opentelemetry/api';
import {
  AggregationTemporality,
  type HistogramMetricData,
  MeterProvider,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

/** A reader the test collects from when it wants, instead of on a timer. */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;
const PROMPT = 'What is ML?';

function setUp() {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
    'telemetry-test',
  );
  const reader = new CollectingReader();
  const meter = new MeterProvider({ readers: [reader] }).getMeter('telemetry-test');
  const histograms = async (): Promise<Map<string, HistogramMetricData>> => {
    const { resourceMetrics } = await reader.collect();
    const found = new Map<string, HistogramMetricData>();
    for (const scope of resourceMetrics.scopeMetrics)
      for (const metric of scope.metrics) found.set(metric.descriptor.name, metric as HistogramMetricData);
    return found;
  };
  return { exporter, tracer, meter, histograms };
}

/** The one finished span (the test's client sends one request). */
function onlySpan(exporter: InMemorySpanExporter): ReadableSpan {
  const spans = exporter.getFinishedSpans();
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

/** Sum and count of a histogram's points whose attributes include `where`. */
function points(metric: HistogramMetricData | undefined, where: Attributes = {}) {
  const matching = (metric?.dataPoints ?? []).filter((p) =>
    Object.entries(where).every(([k, v]) => p.attributes[k] === v),
  );
  return {
    count: matching.reduce((n, p) => n + p.value.count, 0),
    sum: matching.reduce((n, p) => n + (p.value.sum ?? 0), 0),
    attributes: matching[0]?.attributes,
    boundaries: matching[0]?.value.buckets.boundaries,
  };
}

describe.each(PROTOCOLS)('OpenTelemetry over %s', (protocol) => {
  const fake = useFakeTriton({ itlMs: 2 });
  afterEach(() => fake.triton().setFaults(undefined));

  const client = (telemetry: ConstructorParameters<typeof TritonLlm>[0]['telemetry']) =>
    new TritonLlm({
      transport: fake.transport(protocol),
      model: 'tensorrt_llm',
      tokenizer: fakeTokenizer,
      ...(telemetry !== undefined ? { telemetry } : {}),
    });

  it('generate records one GenAI span, the usage and duration metrics, and sends its trace context', async () => {
    const { exporter, tracer, meter, histograms } = setUp();
    const serverUrl = protocol === 'grpc' ? fake.triton().grpcUrl : fake.triton().httpUrl;
    const llm = client({ tracer, meter, serverUrl });
    const inputIds = fakeTokenizer.encode(PROMPT);
    const expected = generateTokens(inputIds, { maxTokens: 7 })[0]!;
    await llm.generate({ prompt: PROMPT, maxTokens: 7, temperature: 0.5, topK: 3, requestId: '7001' });

    const span = onlySpan(exporter);
    expect(span.name).toBe('text_completion tensorrt_llm');
    expect(span.kind).toBe(SPAN_KIND_CLIENT);
    expect(span.status.code).not.toBe(STATUS_ERROR);
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'text_completion',
      'gen_ai.provider.name': 'triton',
      'gen_ai.request.model': 'tensorrt_llm',
      'gen_ai.request.max_tokens': 7,
      'gen_ai.request.temperature': 0.5,
      'gen_ai.request.top_k': 3,
      'gen_ai.response.id': '7001',
      'gen_ai.response.model': 'tensorrt_llm',
      'gen_ai.response.finish_reasons': [expected.finishReason],
      'gen_ai.usage.input_tokens': inputIds.length,
      'gen_ai.usage.output_tokens': expected.tokens.length,
      'server.address': '127.0.0.1',
      'server.port': protocol === 'grpc' ? fake.triton().grpcPort : fake.triton().httpPort,
    });
    expect(span.attributes['gen_ai.request.top_p']).toBeUndefined();

    const received = await fake
      .triton()
      .waitForEvent((e) => e.id === '7001' && e.model === 'tensorrt_llm' && e.event === 'received');
    const { traceId, spanId } = span.spanContext();
    expect(received.traceparent).toBe(`00-${traceId}-${spanId}-01`);

    const metrics = await histograms();
    const duration = points(metrics.get('gen_ai.client.operation.duration'));
    expect(duration.count).toBe(1);
    expect(duration.attributes).toMatchObject({
      'gen_ai.operation.name': 'text_completion',
      'gen_ai.provider.name': 'triton',
      'gen_ai.request.model': 'tensorrt_llm',
    });
    expect(duration.attributes?.['error.type']).toBeUndefined();
    expect(duration.boundaries?.[0]).toBe(0.01);
    const usage = metrics.get('gen_ai.client.token.usage');
    expect(points(usage, { 'gen_ai.token.type': 'input' }).sum).toBe(inputIds.length);
    expect(points(usage, { 'gen_ai.token.type': 'output' }).sum).toBe(expected.tokens.length);
    // The chunk timings are for streamed calls only.
    expect(points(metrics.get('gen_ai.client.operation.time_to_first_chunk')).count).toBe(0);
  });

  it('stream records time to first chunk and one time per output chunk after the first', async () => {
    const { exporter, tracer, meter, histograms } = setUp();
    const llm = client({ tracer, meter });
    const maxTokens = 6;
    let chunks = 0;
    for await (const chunk of llm.stream({ prompt: PROMPT, maxTokens })) if (!chunk.done) chunks++;

    const span = onlySpan(exporter);
    expect(span.attributes['trtllm.request.streaming']).toBe(true);
    expect(span.attributes['gen_ai.usage.output_tokens']).toBe(maxTokens);
    expect(span.attributes['gen_ai.response.finish_reasons']).toEqual(['length']);
    expect(span.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
    const metrics = await histograms();
    expect(points(metrics.get('gen_ai.client.operation.time_to_first_chunk')).count).toBe(1);
    // The raw model answers once per token, each response one chunk.
    expect(chunks).toBe(maxTokens);
    expect(points(metrics.get('gen_ai.client.operation.time_per_output_chunk')).count).toBe(maxTokens - 1);
  });

  it('a mid-stream error ends the span with status ERROR and error.type, and the duration carries it', async () => {
    const { exporter, tracer, meter, histograms } = setUp();
    fake.triton().setFaults({ errorAfterTokens: 3 });
    const llm = client({ tracer, meter });
    let delivered = 0;
    const err = await (async () => {
      for await (const chunk of llm.stream({ prompt: PROMPT, maxTokens: 40 }))
        if (!chunk.done) delivered += chunk.tokenIds.length;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect(delivered).toBe(3);

    const span = onlySpan(exporter);
    expect(span.status.code).toBe(STATUS_ERROR);
    expect(span.status.message).toBe((err as TritonLlmError).message);
    expect(span.attributes['error.type']).toBe((err as TritonLlmError).code);
    expect(span.events.some((e) => e.name === 'exception')).toBe(true);
    const duration = points((await histograms()).get('gen_ai.client.operation.duration'));
    expect(duration.count).toBe(1);
    expect(duration.attributes?.['error.type']).toBe((err as TritonLlmError).code);
  });

  it('an aborted stream is recorded as cancelled, with how the server was told, not as an error', async () => {
    const { exporter, tracer, meter, histograms } = setUp();
    const llm = client({ tracer, meter });
    const controller = new AbortController();
    let tokens = 0;
    for await (const chunk of llm.stream(
      { prompt: PROMPT, maxTokens: 5000 },
      { signal: controller.signal },
    )) {
      if (!chunk.done) {
        tokens += chunk.tokenIds.length;
        if (tokens >= 4) controller.abort();
      }
    }
    const span = onlySpan(exporter);
    expect(span.status.code).not.toBe(STATUS_ERROR);
    expect(span.attributes['gen_ai.response.finish_reasons']).toEqual(['cancelled']);
    expect(span.attributes['trtllm.early_stop.trigger']).toBe('abort');
    expect(span.attributes['trtllm.early_stop.server_stops_generating']).toBe(true);
    expect(points((await histograms()).get('gen_ai.client.operation.duration')).count).toBe(1);
  });

  it('breaking out of a stream ends its span as cancelled', async () => {
    const { exporter, tracer } = setUp();
    const llm = client({ tracer });
    const stream = llm.stream({ prompt: PROMPT, maxTokens: 5000 });
    for await (const chunk of stream) if (!chunk.done && chunk.totalTokens >= 3) break;
    const span = onlySpan(exporter);
    expect(span.attributes['gen_ai.response.finish_reasons']).toEqual(['cancelled']);
    expect(span.attributes['trtllm.early_stop.trigger']).toBe('break');
    expect(span.status.code).not.toBe(STATUS_ERROR);
  });

  it('a request aborted before it is sent ends its span with error.type cancelled', async () => {
    const { exporter, tracer } = setUp();
    const llm = client({ tracer });
    await llm.schema();
    const err = await llm
      .generate({ prompt: PROMPT, maxTokens: 5 }, { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect((err as TritonLlmError).code).toBe('cancelled');
    const span = onlySpan(exporter);
    expect(span.attributes['error.type']).toBe('cancelled');
    expect(span.status.code).toBe(STATUS_ERROR);
  });

  it('a custom injector replaces the W3C headers', async () => {
    const { exporter, tracer } = setUp();
    const injected: string[] = [];
    const llm = client({
      tracer,
      propagate: (span, headers) => {
        injected.push(span.spanContext().spanId);
        headers['x-trace'] = span.spanContext().traceId;
      },
    });
    await llm.generate({ prompt: PROMPT, maxTokens: 2, requestId: '7002' });
    const span = onlySpan(exporter);
    const received = await fake
      .triton()
      .waitForEvent((e) => e.id === '7002' && e.model === 'tensorrt_llm' && e.event === 'received');
    expect(received.traceparent).toBeUndefined();
    expect(injected.length).toBeGreaterThan(0);
    expect(new Set(injected)).toEqual(new Set([span.spanContext().spanId]));
  });

  it('an injector that throws does not fail the request: it goes out without trace context', async () => {
    const { exporter, tracer } = setUp();
    const llm = client({
      tracer,
      propagate: () => {
        throw new TypeError('broken propagator');
      },
    });
    const result = await llm.generate({ prompt: PROMPT, maxTokens: 2 });
    expect(result.finishReason).toBe('length');
    const span = onlySpan(exporter);
    expect(span.events.map((e) => e.name)).toContain('trace_context_not_sent');
    expect(span.status.code).not.toBe(STATUS_ERROR);
  });

  it('a chat caller names the operation chat in the span and the metrics', async () => {
    const { exporter, tracer, meter, histograms } = setUp();
    const llm = client({ tracer, meter, operationName: 'chat' });
    await llm.generate({ prompt: PROMPT, maxTokens: 2 });
    const span = onlySpan(exporter);
    expect(span.name).toBe('chat tensorrt_llm');
    expect(span.attributes['gen_ai.operation.name']).toBe('chat');
    const duration = points((await histograms()).get('gen_ai.client.operation.duration'));
    expect(duration.attributes?.['gen_ai.operation.name']).toBe('chat');
  });

  it('with only a meter, metrics are recorded and no trace context is sent', async () => {
    const { exporter, meter, histograms } = setUp();
    const llm = client({ meter });
    await llm.generate({ prompt: PROMPT, maxTokens: 3, requestId: '7003' });
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    expect(points((await histograms()).get('gen_ai.client.operation.duration')).count).toBe(1);
    const received = await fake
      .triton()
      .waitForEvent((e) => e.id === '7003' && e.model === 'tensorrt_llm' && e.event === 'received');
    expect(received.traceparent).toBeUndefined();
  });

  it('without telemetry nothing is recorded and no trace context is sent', async () => {
    const { exporter, histograms } = setUp();
    const llm = client(undefined);
    await llm.generate({ prompt: PROMPT, maxTokens: 3, requestId: '7004' });
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    expect((await histograms()).size).toBe(0);
    const received = await fake
      .triton()
      .waitForEvent((e) => e.id === '7004' && e.model === 'tensorrt_llm' && e.event === 'received');
    expect(received.traceparent).toBeUndefined();
  });
});

describe('OpenTelemetry for generateBatch', () => {
  const fake = useFakeTriton();

  it('a batched request records one span per item, each with its own usage', async () => {
    const { exporter, tracer } = setUp();
    const llm = new TritonLlm({
      transport: fake.transport('grpc'),
      model: 'ensemble_unary',
      telemetry: { tracer },
    });
    const maxTokens = [4, 9];
    await llm.generateBatch(maxTokens.map((n) => ({ prompt: PROMPT, maxTokens: n })));
    const received = fake
      .triton()
      .events()
      .filter((e) => e.model === 'tensorrt_llm_unary' && e.event === 'received');
    expect(received).toHaveLength(1);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual([
      'text_completion ensemble_unary',
      'text_completion ensemble_unary',
    ]);
    expect(spans.map((s) => s.attributes['gen_ai.usage.output_tokens']).sort()).toEqual(maxTokens);
  });
});

describe('OpenTelemetry when the server is unreachable', () => {
  it('the span and the duration record the failure to connect', async () => {
    const { exporter, tracer, meter, histograms } = setUp();
    // Nothing listens on port 1: the config read fails before any generation starts.
    const transport = grpcTransport({ baseUrl: 'http://127.0.0.1:1' });
    const llm = new TritonLlm({
      transport,
      model: 'ensemble',
      retry: { attempts: 1 },
      telemetry: { tracer, meter },
    });
    const err = await llm.generate({ prompt: PROMPT, maxTokens: 4 }).catch((e: unknown) => e);
    await transport.close();
    expect((err as TritonLlmError).code).toBe('unavailable');
    const span = onlySpan(exporter);
    expect(span.attributes['error.type']).toBe('unavailable');
    expect(span.status.code).toBe(STATUS_ERROR);
    const duration = points((await histograms()).get('gen_ai.client.operation.duration'));
    expect(duration.attributes?.['error.type']).toBe('unavailable');
  });
});

describe('telemetry options', () => {
  it('refuses what is not a tracer, naming the field', () => {
    const err = (() => {
      try {
        new TritonLlm({
          transport: { protocol: 'grpc' } as never,
          model: 'ensemble',
          telemetry: { tracer: null as never },
        });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expect((err as TritonLlmError).message).toMatch(/^telemetry\.tracer: /);
  });
});
