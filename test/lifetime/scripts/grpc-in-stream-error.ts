import { grpcTransport } from '@trtllm/grpc';
import { TritonLlmError } from '@trtllm/sdk';
import { grpcUrl, lastCall } from './child.js';

// The server (the test's) answers with an in-stream error and never ends the call: the client
// leaves it open for the server to end (a reset could crash Triton 2.51), which must not keep
// this script alive.
const transport = grpcTransport({ baseUrl: grpcUrl });
try {
  for await (const _ of transport.stream({ model: 'tensorrt_llm_bls', id: '1', inputs: [] })) {
    // no response comes before the error
  }
  throw new Error('the stream ended without the server error');
} catch (err) {
  if (!(err instanceof TritonLlmError && err.code === 'invalid_argument')) throw err;
}
lastCall();
