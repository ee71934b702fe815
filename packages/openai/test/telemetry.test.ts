import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, test } from 'vitest';
import { startStack } from './stack.js';

describe('telemetry passed to createOpenAiServer', () => {
  test('each request is a GenAI span of the SDK, and Triton receives its trace context', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
      'trtllm-openai-test',
    );
    const stack = await startStack({ model: 'ensemble', server: { telemetry: { tracer } } });
    try {
      const { response } = await stack.client.completions
        .create({ model: 'ensemble', prompt: 'Hello', max_tokens: 3 })
        .withResponse();
      const id = response.headers.get('x-request-id');
      const spans = exporter.getFinishedSpans();
      expect(spans).toHaveLength(1);
      expect(spans[0]!.attributes['gen_ai.request.model']).toBe('ensemble');
      expect(spans[0]!.attributes['gen_ai.request.max_tokens']).toBe(3);
      const received = stack.fake.events().find((e) => e.id === id && e.event === 'received');
      expect(received?.traceparent).toContain(spans[0]!.spanContext().traceId);
    } finally {
      await stack.close();
    }
  });
});
