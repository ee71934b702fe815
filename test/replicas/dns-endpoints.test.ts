import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const MODEL = 'tensorrt_llm_bls';
// Three fakes on one port, at three loopback addresses: what a DNS name with three A records is.
const ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3'];

describe('grpcTransport({ dns })', () => {
  const fakes: FakeTriton[] = [];
  let port = 0;

  beforeAll(async () => {
    for (const host of ADDRESSES) {
      const fake = await startFakeTriton({ host, grpcPort: port });
      port = fake.grpcPort;
      fakes.push(fake);
    }
  });

  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
  });

  const received = (i: number) =>
    fakes[i]!.events().filter((e) => e.event === 'received' && e.model === MODEL);

  it('makes one endpoint per address the name resolves to and balances over them', async () => {
    const asked: string[] = [];
    const t = grpcTransport({
      dns: `replicas.test:${port}`,
      lookup: async (host) => {
        asked.push(host);
        return ADDRESSES;
      },
      healthIntervalMs: 0,
    });
    try {
      const llm = new TritonLlm({ transport: t, model: MODEL });
      const before = fakes.map((_, i) => received(i).length);
      for (let i = 0; i < 6; i++) await llm.generate({ prompt: 'What is ML?', maxTokens: 4 });
      expect(asked[0]).toBe('replicas.test');
      expect(t.endpointStats().map((s) => s.name)).toEqual(ADDRESSES.map((a) => `http://${a}:${port}`));
      expect(fakes.map((_, i) => received(i).length - before[i]!)).toEqual([2, 2, 2]);
    } finally {
      await t.close();
    }
  });

  it('resolves the name again and follows the addresses as they change', async () => {
    let listed = ADDRESSES.slice(0, 1);
    const t = grpcTransport({
      dns: `replicas.test:${port}`,
      lookup: async () => listed,
      healthIntervalMs: 0,
      refreshIntervalMs: 20,
    });
    try {
      const llm = new TritonLlm({ transport: t, model: MODEL });
      await llm.generate({ prompt: 'What is ML?', maxTokens: 4 });
      expect(t.endpointStats().map((s) => s.name)).toEqual([`http://127.0.0.1:${port}`]);
      listed = ADDRESSES.slice(1);
      await vi.waitFor(
        () =>
          expect(t.endpointStats().map((s) => [s.name, s.state])).toContainEqual([
            `http://127.0.0.3:${port}`,
            'healthy',
          ]),
        { timeout: 5000 },
      );
      const before = received(1).length + received(2).length;
      for (let i = 0; i < 4; i++) await llm.generate({ prompt: 'What is ML?', maxTokens: 4 });
      expect(received(1).length + received(2).length - before).toBe(4);
    } finally {
      await t.close();
    }
  });

  it('uses the system resolver by default', async () => {
    const t = grpcTransport({ dns: `localhost:${port}`, healthIntervalMs: 0 });
    try {
      const llm = new TritonLlm({ transport: t, model: MODEL });
      // localhost may also resolve to ::1, where nothing listens: failover covers it.
      expect((await llm.generate({ prompt: 'What is ML?', maxTokens: 4 })).usage.completionTokens).toBe(4);
      expect(t.endpointStats().map((s) => s.name)).toContain(`http://127.0.0.1:${port}`);
    } finally {
      await t.close();
    }
  });

  it('fails requests with unavailable when the name does not resolve', async () => {
    const t = grpcTransport({ dns: 'no-such-host.invalid:8001', healthIntervalMs: 0, refreshIntervalMs: 0 });
    try {
      const llm = new TritonLlm({ transport: t, model: MODEL });
      await expect(llm.ready()).rejects.toMatchObject({ code: 'unavailable' });
    } finally {
      await t.close();
    }
  });
});
