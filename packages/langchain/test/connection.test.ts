import { ChatTriton, type ChatTritonInput } from '@trtllm/langchain';
import { TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itFollowsTheAddressRules } from '../../connect/test/address-settings.js';

const quiet = { warn: () => undefined };

// grpcUrl and httpUrl follow transportFromUrl's rules, the setting naming the protocol.
describe('ChatTriton reaches the server its address names', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton();
  });
  afterAll(() => fake.close());

  itFollowsTheAddressRules(
    () => fake,
    async (connection, prompt) => {
      const model = new ChatTriton({
        ...connection,
        model: 'ensemble',
        chatTemplate: 'chatml',
        logger: quiet,
      });
      try {
        return String((await model.invoke(prompt)).content);
      } finally {
        await model.close();
      }
    },
  );

  it.each([
    ['grpcUrl', 'grpc://triton:8001/v2', /gRPC address has no path/],
    ['grpcUrl', 'ftp://triton:8001', /must start with grpc:\/\//],
    ['httpUrl', 'grpc://triton:8001', /protocol 'http'/],
  ])('%s %s is refused in the constructor, naming the setting and the address', (field, url, why) => {
    let caught: unknown;
    try {
      new ChatTriton({ [field]: url, logger: quiet } as unknown as ChatTritonInput);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TritonLlmError);
    expect(caught).toMatchObject({ code: 'invalid_argument' });
    expect((caught as Error).message).toMatch(why);
    expect((caught as Error).message).toContain(`${field}: `);
    expect((caught as Error).message).toContain(JSON.stringify(url));
  });
});
