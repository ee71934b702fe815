import { httpTransport } from '@trtllm/http';
import { TritonLlm } from '@trtllm/sdk';
import { httpUrl, lastCall } from './child.js';

const llm = new TritonLlm({ transport: httpTransport({ baseUrl: httpUrl }), model: 'ensemble' });
await llm.generate({ prompt: 'What is ML?', maxTokens: 8 });
for await (const _ of llm.stream({ prompt: 'What is ML?', maxTokens: 8 })) {
  // read to the end
}
lastCall();
