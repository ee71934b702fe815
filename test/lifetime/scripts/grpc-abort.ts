import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { grpcUrl, lastCall } from './child.js';

const llm = new TritonLlm({
  transport: grpcTransport({ baseUrl: grpcUrl }),
  model: 'ensemble',
  logger: { warn() {} },
});
const controller = new AbortController();
try {
  for await (const _ of llm.stream(
    { prompt: 'What is ML?', maxTokens: 2000 },
    { signal: controller.signal },
  )) {
    controller.abort();
  }
} catch (err) {
  if (!(err instanceof TritonLlmError && err.code === 'cancelled')) throw err;
}
lastCall();
