// The TypeScript counterpart of the seeds' --stop-after-ms: a long generation on the raw model is
// stopped after N ms with the in-band stop, then cancelled with an AbortSignal; then the same on the
// ensemble, where the server keeps generating and the result says so.
import { grpcTransport } from '@trtllm/grpc';
import { type GenerateRequest, TritonLlm } from '@trtllm/sdk';
import { fakeTokenizer } from '@trtllm/testing';
import { server } from './_server.js';

const STOP_AFTER_MS = Number(process.env.STOP_AFTER_MS ?? 150);
const triton = await server({ itlMs: 5 });
const transport = grpcTransport({ baseUrl: triton.grpcUrl });
// Against a real deployment, load the model's tokenizer: `await loadTokenizer(dir)` from @trtllm/tokenizers.
const raw = new TritonLlm({ transport, model: 'tensorrt_llm', tokenizer: fakeTokenizer });
const ensemble = new TritonLlm({
  transport,
  model: 'ensemble',
  logger: { warn: (m) => console.log(`warning: ${m}`) },
});
const request: GenerateRequest = { prompt: 'What is ML?', maxTokens: 3000 };

async function run(label: string, llm: TritonLlm, how: 'stop' | 'abort'): Promise<void> {
  const controller = new AbortController();
  const stream = llm.stream(request, { signal: controller.signal });
  const timer = setTimeout(() => (how === 'stop' ? void stream.stop() : controller.abort()), STOP_AFTER_MS);
  let tokens = 0;
  for await (const chunk of stream) {
    if (!chunk.done) {
      tokens = chunk.totalTokens;
      continue;
    }
    clearTimeout(timer);
    const r = chunk.result.earlyStop;
    console.log(
      `${label}: ${tokens} tokens arrived, finish=${chunk.finishReason}, server told via ${r?.via.join(' + ') ?? 'nothing'}, ` +
        `server stops generating: ${r?.serverStopsGenerating ?? 'n/a'}`,
    );
  }
}

await run(`raw tensorrt_llm, stop() after ${STOP_AFTER_MS} ms`, raw, 'stop');
await run(`raw tensorrt_llm, AbortSignal after ${STOP_AFTER_MS} ms`, raw, 'abort');
await run(`ensemble, AbortSignal after ${STOP_AFTER_MS} ms`, ensemble, 'abort');
await transport.close();
await triton.close();
