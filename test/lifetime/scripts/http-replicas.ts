import { httpTransport } from '@trtllm/http';
import { TritonLlm } from '@trtllm/sdk';
import { httpUrl, lastCall } from './child.js';

const port = new URL(httpUrl).port;
const transport = httpTransport({
  baseUrls: [`http://127.0.0.1:${port}`, `http://localhost:${port}`],
  healthIntervalMs: 200,
});
const llm = new TritonLlm({ transport, model: 'ensemble' });
await llm.generate({ prompt: 'What is ML?', maxTokens: 8 });
lastCall();
