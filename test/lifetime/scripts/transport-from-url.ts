import { transportFromUrl } from '@trtllm/connect';
import { TritonLlm } from '@trtllm/sdk';
import { grpcPort, httpUrl, lastCall } from './child.js';

const overGrpc = new TritonLlm({
  transport: transportFromUrl(`grpc://127.0.0.1:${grpcPort}`),
  model: 'ensemble',
});
const overHttp = new TritonLlm({ transport: transportFromUrl(httpUrl), model: 'ensemble' });
await overGrpc.generate({ prompt: 'What is ML?', maxTokens: 8 });
await overHttp.generate({ prompt: 'What is ML?', maxTokens: 8 });
lastCall();
