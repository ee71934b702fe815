// tensorrt_llm_bls with accumulate_tokens: every response repeats all text so far; the SDK yields
// deltas and holds back a trailing U+FFFD until the next response completes the character. The
// ensemble, which decodes each token alone, is shown beside it: its chunks are flagged lossy.
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { server } from './_server.js';

const triton = await server();
const transport = grpcTransport({ baseUrl: triton.grpcUrl });
for (const model of ['tensorrt_llm_bls', 'ensemble']) {
  const llm = new TritonLlm({ transport, model });
  let text = '';
  let lossy = 0;
  for await (const chunk of llm.stream({ prompt: 'What is ML?', maxTokens: 60 })) {
    if (!chunk.done) {
      text += chunk.text;
      if (chunk.lossy) lossy++;
    }
  }
  console.log(`${model}: ${JSON.stringify(text)} (lossy chunks: ${lossy})`);
}
await transport.close();
await triton.close();
