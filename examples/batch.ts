// Several prompts in one call; results come back in input order.
import { httpTransport } from '@trtllm/http';
import { TritonLlm } from '@trtllm/sdk';
import { server } from './_server.js';

const triton = await server();
const llm = new TritonLlm({ transport: httpTransport({ baseUrl: triton.httpUrl }), model: 'ensemble' });
const prompts = ['What is ML?', 'Hello world', 'Machine learning is'];
const results = await llm.generateBatch(prompts.map((prompt) => ({ prompt, maxTokens: 10 })));
results.forEach((r, i) => {
  console.log(`${JSON.stringify(prompts[i])} -> ${JSON.stringify(r.text)}`);
});
await llm.close();
await triton.close();
