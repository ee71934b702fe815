import { createTriton } from '@trtllm/ai-sdk';
import { streamText } from 'ai';
import { grpcUrl, lastCall } from './child.js';

const triton = createTriton({ grpcUrl });
const result = streamText({ model: triton('tensorrt_llm_bls'), prompt: 'What is ML?', maxOutputTokens: 8 });
for await (const _ of result.textStream) {
  // read to the end
}
await result.finishReason;
lastCall();
