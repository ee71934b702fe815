import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { grpcUrl } from './child.js';

// The fake sends a token every 100 ms: the stream is open for about 1.5 s, and nothing but the
// stream itself (no timer, no close()) keeps the process alive until its last chunk.
const llm = new TritonLlm({ transport: grpcTransport({ baseUrl: grpcUrl }), model: 'tensorrt_llm_bls' });
console.log(`stream started at ${Date.now()}`);
for await (const chunk of llm.stream({ prompt: 'What is ML?', maxTokens: 15 })) {
  if (chunk.done)
    console.log(
      `final chunk (${chunk.result.usage.completionTokens} tokens, finish=${chunk.finishReason}) at ${Date.now()}`,
    );
}
