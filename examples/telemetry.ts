// OpenTelemetry: the SDK records one GenAI span per request and the GenAI client metrics with the
// tracer and meter you give it, and sends the span's trace context to Triton (traceparent), so a
// Triton started with --trace-config mode=opentelemetry puts its own spans in the same trace.
// Here both go to the console; in a service, use your OTLP exporters instead.
import {
  ConsoleMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { server } from './_server.js';

const tracing = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())],
});
// Exported at shutdown below; the interval only matters for a long-running process.
const reader = new PeriodicExportingMetricReader({
  exporter: new ConsoleMetricExporter(),
  exportIntervalMillis: 60_000,
});
const metrics = new MeterProvider({ readers: [reader] });

const triton = await server({ itlMs: 5 });
const llm = new TritonLlm({
  transport: grpcTransport({ baseUrl: triton.grpcUrl }),
  model: 'tensorrt_llm_bls',
  telemetry: {
    tracer: tracing.getTracer('telemetry-example'),
    meter: metrics.getMeter('telemetry-example'),
    serverUrl: triton.grpcUrl,
  },
});

const result = await llm.generate({ prompt: 'What is ML?', maxTokens: 16, temperature: 0.7 });
console.log(`generate: finish=${result.finishReason} tokens=${result.usage.completionTokens}`);

let chunks = 0;
for await (const chunk of llm.stream({ prompt: 'What is ML?', maxTokens: 24 })) if (!chunk.done) chunks++;
console.log(`stream: ${chunks} chunks`);

await llm.close();
await triton.close();
await Promise.all([tracing.shutdown(), metrics.shutdown()]);
