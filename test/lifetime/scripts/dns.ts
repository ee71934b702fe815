import { transportFromUrl } from '@trtllm/connect';
import { TritonLlm } from '@trtllm/sdk';
import { grpcPort, lastCall } from './child.js';

// Every address of the name, looked up again every refreshIntervalMs (on a timer of its own).
const llm = new TritonLlm({ transport: transportFromUrl(`dns:localhost:${grpcPort}`), model: 'ensemble' });
await llm.generate({ prompt: 'What is ML?', maxTokens: 8 });
lastCall();
