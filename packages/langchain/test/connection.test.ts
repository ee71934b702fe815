import { ChatTriton, type ChatTritonInput } from '@trtllm/langchain';
import { TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../connect/test/gateway.js';

const quiet = { warn: () => undefined };

// grpcUrl and httpUrl follow transportFromUrl's rules, the setting naming the protocol.
describe('ChatTriton reaches the server its address names', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton();
  });
  afterAll(() => fake.close());

  async function answer(connection: ChatTritonInput): Promise<string> {
    const model = new ChatTriton({ ...connection, model: 'ensemble', chatTemplate: 'chatml', logger: quiet });
    try {
      return String((await model.invoke(`Hi ${fakeScript('reached')}`)).content);
    } finally {
      await model.close();
    }
  }
  const received = () => fake.events().filter((e) => e.event === 'received' && e.model === 'ensemble');

  it.each([
    ['grpcUrl http://host:port', () => ({ grpcUrl: fake.grpcUrl }), 'grpc'],
    ['grpcUrl grpc://host:port', () => ({ grpcUrl: fake.grpcUrl.replace(/^http:/, 'grpc:') }), 'grpc'],
    ['grpcUrl dns:host:port', () => ({ grpcUrl: `dns:${new URL(fake.grpcUrl).host}` }), 'grpc'],
    ['httpUrl http://host:port', () => ({ httpUrl: fake.httpUrl }), 'http'],
  ])('%s', async (_, connection, protocol) => {
    const before = received().length;
    expect(await answer(connection())).toBe('reached');
    expect(
      received()
        .slice(before)
        .map((e) => e.protocol),
    ).toEqual([protocol]);
  });

  it('httpUrl keeps its path prefix behind a gateway', async () => {
    const gateway = await startGateway(fake.httpUrl);
    try {
      expect(await answer({ httpUrl: gateway.url })).toBe('reached');
      expect(gateway.seen.length).toBeGreaterThan(0);
      expect(gateway.seen.every((p) => p.startsWith('/triton/v2/'))).toBe(true);
    } finally {
      await gateway.close();
    }
  });

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
