// Beam search and several returned sequences, demultiplexed by their index.
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { fakeTokenizer } from '@trtllm/testing';
import { server } from './_server.js';

const triton = await server();
const transport = grpcTransport({ baseUrl: triton.grpcUrl });
const beams = new TritonLlm({ transport, model: 'tensorrt_llm_unary', tokenizer: fakeTokenizer });
const b = await beams.generate({ prompt: 'What is ML?', maxTokens: 12, beamWidth: 3 });
for (const s of b.sequences) console.log(`beam ${s.index}: ${JSON.stringify(s.text)}`);
const many = new TritonLlm({ transport, model: 'tensorrt_llm_bls' });
const n = await many.generate({ prompt: 'What is ML?', maxTokens: 12, numReturnSequences: 2 });
for (const s of n.sequences)
  console.log(`sequence ${s.index}: ${JSON.stringify(s.text)} (${s.finishReason})`);
await transport.close();
await triton.close();
