// Stop and bad words. Ensemble/BLS take strings; the server matches them on token ids, so the SDK
// also enforces stop strings on the text itself, across chunk boundaries, and trims them.
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { server } from './_server.js';

const triton = await server();
const llm = new TritonLlm({ transport: grpcTransport({ baseUrl: triton.grpcUrl }), model: 'ensemble' });
const plain = await llm.generate({ prompt: 'What is ML?', maxTokens: 40 });
console.log(`no words:  ${JSON.stringify(plain.text)}`);
const stopped = await llm.generate({ prompt: 'What is ML?', maxTokens: 40, stopWords: ['study'] });
console.log(`stop 'study': ${JSON.stringify(stopped.text)} (finish=${stopped.finishReason})`);
const banned = await llm.generate({ prompt: 'What is ML?', maxTokens: 40, badWords: [' learning'] });
console.log(`bad ' learning': ${JSON.stringify(banned.text)}`);
await llm.close();
await triton.close();
