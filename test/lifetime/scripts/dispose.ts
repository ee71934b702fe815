import { connect } from 'node:net';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { startFakeTriton } from '@trtllm/testing';

// `await using` on the fake, a transport and a client: each is closed when the block ends.
let grpc: Transport;
let http: Transport;
let port = 0;
{
  await using fake = await startFakeTriton();
  port = fake.grpcPort;
  await using transport = grpcTransport({ baseUrl: fake.grpcUrl });
  http = httpTransport({ baseUrl: fake.httpUrl });
  await using llm = new TritonLlm({ transport: http, model: 'ensemble' });
  grpc = transport;
  await new TritonLlm({ transport, model: 'ensemble' }).generate({ prompt: 'What is ML?', maxTokens: 4 });
  await llm.generate({ prompt: 'What is ML?', maxTokens: 4 });
}

async function afterwards(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'answered';
  } catch (err) {
    return err instanceof TritonLlmError ? `${err.code}: ${err.message}` : String(err);
  }
}

/** Whether anything still listens on the fake's gRPC port. */
function listening(at: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: at });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

console.log(
  JSON.stringify({
    grpc: await afterwards(() => grpc.serverLive()),
    http: await afterwards(() => http.serverLive()),
    fakeListening: await listening(port),
  }),
);
