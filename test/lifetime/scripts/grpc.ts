import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { grpcUrl, lastCall } from './child.js';

const llm = new TritonLlm({ transport: grpcTransport({ baseUrl: grpcUrl }), model: 'ensemble' });
await llm.generate({ prompt: 'What is ML?', maxTokens: 8 });
lastCall();
