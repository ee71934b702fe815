import { ChatTriton } from '@trtllm/langchain';
import { grpcUrl, lastCall } from './child.js';

const chat = new ChatTriton({ grpcUrl, model: 'tensorrt_llm_bls', maxTokens: 8 });
for await (const _ of await chat.stream('What is ML?')) {
  // read to the end
}
lastCall();
