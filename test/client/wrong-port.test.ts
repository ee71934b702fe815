import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { useFakeTriton } from '../support/fake.js';

// Issue 53: "use httpTransport for HTTP" names an SDK function that AI SDK, LangChain and OpenAI
// server users never call. The protocol the address speaks is a field of the error, from which each
// front end names its own setting (grpcUrl / httpUrl, --triton grpc://...).
describe('a transport pointed at the other protocol port', () => {
  const fake = useFakeTriton();
  const transports: Transport[] = [];
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
  });

  async function failure(transport: Transport): Promise<TritonLlmError> {
    transports.push(transport);
    const llm = new TritonLlm({ transport, model: 'ensemble', retry: { attempts: 1 } });
    const err = await llm.generate({ prompt: 'Hi', maxTokens: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    return err as TritonLlmError;
  }

  it('gRPC at the HTTP port: endpointProtocol http', async () => {
    const err = await failure(grpcTransport({ baseUrl: fake.triton().httpUrl }));
    expect({ code: err.code, endpointProtocol: err.endpointProtocol }).toEqual({
      code: 'unavailable',
      endpointProtocol: 'http',
    });
    expect(err.message).toMatch(
      /this is not a gRPC endpoint \(Triton listens for gRPC on 8001 and HTTP on 8000/,
    );
  });

  it('HTTP at the gRPC port: endpointProtocol grpc', async () => {
    const err = await failure(httpTransport({ baseUrl: fake.triton().grpcUrl }));
    expect({ code: err.code, endpointProtocol: err.endpointProtocol }).toEqual({
      code: 'unavailable',
      endpointProtocol: 'grpc',
    });
    expect(err.message).toMatch(
      /this is not Triton's HTTP endpoint \(Triton listens for HTTP on 8000 and gRPC on 8001/,
    );
  });
});
