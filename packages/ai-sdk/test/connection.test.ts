import { createTriton, type TritonProviderSettings } from '@trtllm/ai-sdk';
import { TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import { generateText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itFollowsTheAddressRules } from '../../connect/test/address-settings.js';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

// grpcUrl, httpUrl and their environment variables follow transportFromUrl's rules, the setting naming the protocol.
describe('createTriton reaches the server its address names', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton();
  });
  afterAll(() => fake.close());

  const received = () => fake.events().filter((e) => e.event === 'received' && e.model === 'ensemble');
  async function answer(
    settings: TritonProviderSettings,
    prompt = `Hi ${fakeScript('reached')}`,
  ): Promise<string> {
    const triton = createTriton(settings);
    try {
      const r = await generateText({
        model: triton('ensemble'),
        prompt,
        maxRetries: 0,
      });
      return r.text;
    } finally {
      await triton.close();
    }
  }

  itFollowsTheAddressRules(() => fake, answer);

  it('TRITON_GRPC_URL takes a grpc:// address', async () => {
    const saved = { grpc: process.env.TRITON_GRPC_URL, http: process.env.TRITON_HTTP_URL };
    process.env.TRITON_GRPC_URL = fake.grpcUrl.replace(/^http:/, 'grpc:');
    delete process.env.TRITON_HTTP_URL;
    try {
      const before = received().length;
      expect(await answer({})).toBe('reached');
      expect(
        received()
          .slice(before)
          .map((e) => e.protocol),
      ).toEqual(['grpc']);
    } finally {
      for (const [name, value] of [
        ['TRITON_GRPC_URL', saved.grpc],
        ['TRITON_HTTP_URL', saved.http],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it.each([
    ['grpcUrl', 'ftp://triton:8001', /must start with grpc:\/\//],
    ['grpcUrl', 'grpc://triton:8001/v2', /gRPC address has no path/],
    ['httpUrl', 'grpcs://triton:8001', /protocol 'http'/],
  ])(
    '%s %s fails the first call naming the setting and the address, before anything is sent',
    async (field, url, why) => {
      const before = fake.events().length;
      const err = await answer({ [field]: url }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TritonLlmError);
      expect(err).toMatchObject({ code: 'invalid_argument' });
      expect((err as Error).message).toMatch(why);
      expect((err as Error).message).toContain(`${field}: `);
      expect((err as Error).message).toContain(JSON.stringify(url));
      expect(fake.events().length).toBe(before);
    },
  );
});
