// generate() over gRPC and over HTTP: the same request, the same typed result.
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { TritonLlm } from '@trtllm/sdk';
import { server } from './_server.js';

const triton = await server();
for (const transport of [
  grpcTransport({ baseUrl: triton.grpcUrl }),
  httpTransport({ baseUrl: triton.httpUrl }),
]) {
  const llm = new TritonLlm({ transport, model: 'ensemble' });
  const result = await llm.generate({ prompt: 'What is ML?', maxTokens: 24, temperature: 0.7, topP: 0.9 });
  console.log(`[${transport.protocol}] ${JSON.stringify(result.text)}`);
  console.log(
    `[${transport.protocol}] finish=${result.finishReason} tokens=${result.usage.completionTokens} id=${result.requestId}`,
  );
  await llm.close();
}
await triton.close();
