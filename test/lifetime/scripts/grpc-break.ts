import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { grpcUrl, lastCall } from './child.js';

// The ensemble keeps generating on the server after the break; the client's part is over.
const llm = new TritonLlm({
  transport: grpcTransport({ baseUrl: grpcUrl }),
  model: 'ensemble',
  logger: { warn() {} },
});
for await (const _ of llm.stream({ prompt: 'What is ML?', maxTokens: 2000 })) break;
lastCall();
