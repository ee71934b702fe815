import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { fakeTokenizer } from '@trtllm/testing';
import { grpcUrl, lastCall } from './child.js';

// stop(): the in-band stop of the raw model; the stream then ends with the server's last response.
const llm = new TritonLlm({
  transport: grpcTransport({ baseUrl: grpcUrl }),
  model: 'tensorrt_llm',
  tokenizer: fakeTokenizer,
});
const stream = llm.stream({ prompt: 'What is ML?', maxTokens: 2000 });
let finish = '';
for await (const chunk of stream) {
  if (!chunk.done) await stream.stop();
  else finish = chunk.finishReason;
}
if (finish !== 'stopped') throw new Error(`finish=${finish}, not stopped`);
lastCall();
