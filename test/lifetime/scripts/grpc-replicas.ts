import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { grpcPort, lastCall } from './child.js';

// Two names of one fake: two endpoints, each with its connection and its health checks.
const transport = grpcTransport({
  baseUrls: [`http://127.0.0.1:${grpcPort}`, `http://localhost:${grpcPort}`],
  healthIntervalMs: 200,
});
const llm = new TritonLlm({ transport, model: 'ensemble' });
await llm.generate({ prompt: 'What is ML?', maxTokens: 8 });
for await (const _ of llm.stream({ prompt: 'What is ML?', maxTokens: 8 })) {
  // read to the end
}
lastCall();
