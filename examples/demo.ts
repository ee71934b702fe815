// The quick-start demo: start the embedded fake Triton, stream a completion from the `ensemble`
// model over gRPC, then start a second request on the raw `tensorrt_llm` model and cancel it early
// with an AbortSignal, printing what each returned and what the server saw.
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { startFakeTriton } from '@trtllm/testing';

const triton = await startFakeTriton({ ttftMs: 40, itlMs: 15 });
console.log(`fake Triton: gRPC ${triton.grpcUrl}, HTTP ${triton.httpUrl}`);
const transport = grpcTransport({ baseUrl: triton.grpcUrl });

try {
  const llm = new TritonLlm({ transport, model: 'tensorrt_llm_bls' });
  process.stdout.write('\n1) streaming from tensorrt_llm_bls:\n   ');
  for await (const chunk of llm.stream({ prompt: 'What is ML?', maxTokens: 62 })) {
    if (chunk.done) {
      const t = chunk.timings;
      console.log(
        `\n   -> finish: ${chunk.finishReason}, tokens: ${chunk.usage.completionTokens}, ` +
          `first token after ${t.timeToFirstTokenMs?.toFixed(1)} ms, total ${t.totalMs.toFixed(1)} ms`,
      );
    } else {
      process.stdout.write(chunk.text);
    }
  }

  const raw = new TritonLlm({ transport, model: 'tensorrt_llm' });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  process.stdout.write('\n2) raw tensorrt_llm, cancelled after 200 ms:\n   ');
  const ids: number[] = [];
  for await (const chunk of raw.stream(
    { inputIds: [259, 260], maxTokens: 2000 },
    { signal: controller.signal },
  )) {
    if (chunk.done) {
      const stop = chunk.result.earlyStop;
      console.log(
        `\n   -> finish: ${chunk.finishReason} after ${ids.length} tokens; server told via ${stop?.via.join(', ')}; ` +
          `server stops generating: ${stop?.serverStopsGenerating}`,
      );
      const seen = await triton.waitForEvent(
        (e) => e.id === chunk.requestId && e.event === 'cancelled',
        2000,
      );
      console.log(
        `   -> the fake Triton logged '${seen.event}' for request ${seen.id} after ${seen.tokens} tokens`,
      );
    } else {
      ids.push(...chunk.tokenIds);
      process.stdout.write(`${chunk.tokenIds.join(' ')} `);
    }
  }
} finally {
  await transport.close();
  await triton.close();
}
