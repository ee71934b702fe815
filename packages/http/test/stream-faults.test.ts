import { httpTransport } from '@trtllm/http';
import { type InferResponse, tensorNumbers } from '@trtllm/sdk';
import { generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { useFakeTriton } from './fake.js';
import { drain, rawRequest } from './helpers.js';

const fake = useFakeTriton();
const PROMPT = [259, 260, 261];
const expected = generateTokens(PROMPT, { maxTokens: 8 })[0]?.tokens ?? [];

const run = async (id: string) =>
  drain(httpTransport({ baseUrl: fake().httpUrl }).stream(rawRequest(id, PROMPT, 8, { streaming: true })));
const tokensOf = (responses: readonly InferResponse[]) =>
  responses.flatMap((r) => r.outputs.filter((t) => t.name === 'output_ids').flatMap((t) => tensorNumbers(t)));

describe('failures in the middle of a stream', () => {
  it('delivers the tokens before a model error, then throws it with the server message', async () => {
    fake().setFaults({ errorAfterTokens: 3 });
    const { responses, error } = await run('f-1');
    expect(tokensOf(responses)).toEqual(expected.slice(0, 3));
    expect(responses.some((r) => r.final)).toBe(false);
    expect(error?.code).toBe('internal');
    expect(error?.serverMessage).toBeTruthy();
    expect(error?.requestId).toBe('f-1');
  });

  it('fails with unavailable when the connection drops, never a short answer', async () => {
    fake().setFaults({ dropConnectionAfterTokens: 3 });
    const { responses, error } = await run('f-2');
    // Bytes that arrived but were not read yet die with the connection (a web stream that errors
    // drops its queue), so what was delivered is a prefix of the tokens sent.
    const tokens = tokensOf(responses);
    expect(tokens).toEqual(expected.slice(0, tokens.length));
    expect(tokens.length).toBeLessThanOrEqual(3);
    expect(responses.some((r) => r.final)).toBe(false);
    expect(error?.code).toBe('unavailable');
  });

  it('fails with protocol on an event that is not JSON, after the tokens before it', async () => {
    fake().setFaults({ malformedAfterTokens: 2 });
    const { responses, error } = await run('f-3');
    expect(tokensOf(responses)).toEqual(expected.slice(0, 2));
    expect(error?.code).toBe('protocol');
  });

  it('never reports a stream cut before its end as complete', async () => {
    fake().setFaults({ omitFinalResponse: true });
    const { responses, error } = await run('f-4');
    expect(responses.some((r) => r.final)).toBe(false);
    expect(error?.code).toBe('unavailable');
  });

  it('maps a status refusal of the stream to its code on the first pull', async () => {
    fake().setFaults({ statusOnce: { grpc: 8, http: 429, message: 'too many requests' } });
    const { responses, error } = await run('f-5');
    expect(responses).toEqual([]);
    expect(error?.code).toBe('resource_exhausted');
    expect(error?.httpStatus).toBe(429);
    expect(error?.serverMessage).toBe('too many requests');
  });
});
