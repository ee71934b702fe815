import { httpTransport } from '@trtllm/http';
import { TritonLlm, type TritonLlmError } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import { useFakeTriton } from './fake.js';
import { ensembleRequest } from './helpers.js';

const fake = useFakeTriton({});

const NOT_HTTP = /does not answer HTTP\/1\.1 .*this is not Triton's HTTP endpoint .*use grpcTransport/;

async function failure(run: () => Promise<unknown>): Promise<TritonLlmError> {
  try {
    await run();
  } catch (err) {
    return err as TritonLlmError;
  }
  throw new Error('the call succeeded');
}

describe('the HTTP transport pointed at an HTTP/2-only port (the gRPC port)', () => {
  it("says so, not retryable, every time (health, the model's config, a streamed generation)", async () => {
    const transport = httpTransport({ baseUrl: fake().grpcUrl });
    const llm = new TritonLlm({ transport, model: 'ensemble', retry: { attempts: 1 } });
    const errors = [
      await failure(() => transport.serverLive()),
      await failure(() => transport.serverLive()),
      await failure(() => llm.generate({ prompt: 'What is ML?', maxTokens: 4 })),
      await failure(async () => {
        for await (const _ of transport.stream(ensembleRequest('w-1', 'What is ML?', 4, true))) {
          // nothing arrives
        }
      }),
    ];
    await llm.close();
    for (const err of errors) {
      expect({ code: err.code, retryable: err.retryable }).toEqual({ code: 'unavailable', retryable: false });
      expect(err.message).toMatch(NOT_HTTP);
    }
  });
});
