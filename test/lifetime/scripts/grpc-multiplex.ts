import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { grpcUrl, lastCall } from './child.js';

// The shared ModelStreamInfer calls stay open between requests: they must not hold the process.
const llm = new TritonLlm({
  transport: grpcTransport({ baseUrl: grpcUrl, multiplex: true }),
  model: 'ensemble',
});
await Promise.all([
  llm.generate({ prompt: 'What is ML?', maxTokens: 8 }),
  llm.generate({ prompt: 'What is AI?', maxTokens: 8 }),
]);
lastCall();
