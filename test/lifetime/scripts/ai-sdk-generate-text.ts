import { createTriton } from '@trtllm/ai-sdk';
import { generateText } from 'ai';
import { grpcUrl, lastCall } from './child.js';

const triton = createTriton({ grpcUrl });
await generateText({ model: triton('tensorrt_llm_bls'), prompt: 'What is ML?', maxOutputTokens: 8 });
lastCall();
