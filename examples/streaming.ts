// stream(): print text as it arrives, then the finish reason, usage and timings from the final chunk.
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { server } from './_server.js';

const triton = await server({ itlMs: 10 });
const llm = new TritonLlm({
  transport: grpcTransport({ baseUrl: triton.grpcUrl }),
  model: 'tensorrt_llm_bls',
});
for await (const chunk of llm.stream({ prompt: 'What is ML?', maxTokens: 48 })) {
  if (!chunk.done) process.stdout.write(chunk.text);
  else {
    const t = chunk.timings;
    const itl = t.interTokenMs.reduce((a, b) => a + b, 0) / Math.max(1, t.interTokenMs.length);
    console.log(`\nfinish=${chunk.finishReason} tokens=${chunk.usage.completionTokens}`);
    console.log(
      `ttft=${t.timeToFirstTokenMs?.toFixed(1)}ms mean itl=${itl.toFixed(1)}ms total=${t.totalMs.toFixed(1)}ms`,
    );
  }
}
await llm.close();
await triton.close();
