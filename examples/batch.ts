// Several prompts in one call; results come back in input order. A non-decoupled model
// (`ensemble_unary`) gets them as one request with a batch dimension; a decoupled one
// (`ensemble`) gets one request per prompt, which Triton's in-flight batcher batches.
import { httpTransport } from '@trtllm/http';
import { TritonLlm } from '@trtllm/sdk';
import { server } from './_server.js';

const triton = await server();
const transport = httpTransport({ baseUrl: triton.httpUrl });
const prompts = ['What is ML?', 'Hello world', 'Machine learning is'];
for (const model of ['ensemble_unary', 'ensemble']) {
  const llm = new TritonLlm({ transport, model });
  const results = await llm.generateBatch(prompts.map((prompt) => ({ prompt, maxTokens: 10 })));
  console.log(`${model}: ${new Set(results.map((r) => r.requestId)).size} request(s)`);
  results.forEach((r, i) => {
    console.log(`  ${JSON.stringify(prompts[i])} -> ${JSON.stringify(r.text)}`);
  });
}
await transport.close();
await triton.close();
