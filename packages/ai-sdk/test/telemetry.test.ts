import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createTriton } from '@trtllm/ai-sdk';
import { fakeScript, startFakeTriton } from '@trtllm/testing';
import { streamText } from 'ai';
import { describe, expect, it } from 'vitest';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

describe('AI SDK provider telemetry', () => {
  it('a streamText call is one GenAI chat span from the SDK, and the server receives its trace context', async () => {
    const fake = await startFakeTriton({ itlMs: 0 });
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
      'ai-sdk-test',
    );
    const triton = createTriton({ grpcUrl: fake.grpcUrl, telemetry: { tracer } });
    try {
      const result = streamText({
        model: triton('tensorrt_llm_bls'),
        prompt: `Hi ${fakeScript('traced')}`,
        maxOutputTokens: 20,
        providerOptions: { trtllm: { requestId: '424242' } },
      });
      expect(await result.text).toBe('traced');
      const spans = exporter.getFinishedSpans();
      expect(spans).toHaveLength(1);
      const span = spans[0]!;
      expect(span.attributes['gen_ai.operation.name']).toBe('chat');
      expect(span.attributes['gen_ai.request.model']).toBe('tensorrt_llm_bls');
      expect(span.attributes['gen_ai.request.max_tokens']).toBe(20);
      const received = fake.events().find((e) => e.id === '424242' && e.event === 'received');
      expect(received?.traceparent).toContain(span.spanContext().traceId);
    } finally {
      await triton.close();
      await fake.close();
    }
  });
});
