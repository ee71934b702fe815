import { runBenchmark } from '@trtllm/bench';
import { grpcPort, lastCall } from './child.js';

await runBenchmark({
  url: `grpc://127.0.0.1:${grpcPort}`,
  protocol: 'grpc',
  model: 'ensemble',
  prompts: [{ input: 'What is ML?', line: 1 }],
  concurrency: [2],
  numRequests: 4,
  maxTokens: 8,
  streaming: true,
});
lastCall();
