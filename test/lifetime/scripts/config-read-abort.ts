import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { grpcUrl, httpUrl, lastCall } from './child.js';

// The server (the test's) accepts connections and never writes a byte, so each client's first
// request waits on the model config read. Its signal ends that wait; the read, which no one waits
// for any more, must end on the wire too, or it would keep this script alive.
for (const transport of [grpcTransport({ baseUrl: grpcUrl }), httpTransport({ baseUrl: httpUrl })]) {
  const llm = new TritonLlm({ transport, model: 'ensemble', retry: { attempts: 1 } });
  try {
    await llm.generate({ prompt: 'What is ML?', maxTokens: 8 }, { signal: AbortSignal.timeout(200) });
    throw new Error(`${transport.protocol}: the request ended without the caller's deadline`);
  } catch (err) {
    if (!(err instanceof TritonLlmError && err.code === 'deadline_exceeded')) throw err;
    console.log(`${transport.protocol}: ${err.message}`);
  }
}
lastCall();
