import { httpTransport } from '@trtllm/http';
import { TritonLlm } from '@trtllm/sdk';
import { httpUrl, lastCall } from './child.js';

const llm = new TritonLlm({
  transport: httpTransport({ baseUrl: httpUrl }),
  model: 'ensemble',
  logger: { warn() {} },
});
for await (const _ of llm.stream({ prompt: 'What is ML?', maxTokens: 2000 })) break;
lastCall();
