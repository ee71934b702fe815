import { ChatTriton } from '@trtllm/langchain';
import { grpcUrl, lastCall } from './child.js';

const chat = new ChatTriton({ grpcUrl, model: 'tensorrt_llm_bls', maxTokens: 8 });
await chat.invoke('What is ML?');
lastCall();
