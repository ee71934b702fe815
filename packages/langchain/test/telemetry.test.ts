import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ChatTriton } from '@trtllm/langchain';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('ChatTriton with OpenTelemetry', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton();
  });
  afterAll(() => fake.close());

  it('records one chat span per call, with the request id and finish reason of the reply', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
      'langchain-test',
    );
    const model = new ChatTriton({
      grpcUrl: fake.grpcUrl,
      model: 'tensorrt_llm_bls',
      maxTokens: 16,
      telemetry: { tracer },
    });
    try {
      const reply = await model.invoke(`Hi ${fakeScript('Hello from a span.')}`);
      const spans = exporter.getFinishedSpans();
      expect(spans.map((s) => s.name)).toEqual(['chat tensorrt_llm_bls']);
      expect(spans[0]!.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.max_tokens': 16,
        'gen_ai.response.id': reply.response_metadata.request_id,
        'gen_ai.response.finish_reasons': ['stop'],
      });
    } finally {
      await model.close();
    }
  });
});
