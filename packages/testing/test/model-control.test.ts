import { startFakeTriton } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';

// The fake's explicit model control as a user starts it; what each answer looks like, checked
// against the real Triton, is in test/conformance/model-control.test.ts.
async function served(httpUrl: string): Promise<string[]> {
  const r = await fetch(`${httpUrl}/v2/repository/index`, { method: 'POST' });
  const index = (await r.json()) as { name: string; state?: string }[];
  return index.filter((m) => m.state === 'READY').map((m) => m.name);
}

describe('startFakeTriton({ modelControl: "explicit" })', () => {
  it('loads nothing without loadModels, and every model with "*"', async () => {
    await using none = await startFakeTriton({ modelControl: 'explicit' });
    expect(await served(none.httpUrl)).toEqual([]);
    await using all = await startFakeTriton({ modelControl: 'explicit', loadModels: ['*'] });
    await using plain = await startFakeTriton();
    expect(await served(all.httpUrl)).toEqual(await served(plain.httpUrl));
    expect((await served(all.httpUrl)).length).toBeGreaterThan(5);
  });

  it('takes load and unload requests, where the default mode refuses them', async () => {
    await using fake = await startFakeTriton({ modelControl: 'explicit' });
    const control = (model: string, action: string) =>
      fetch(`${fake.httpUrl}/v2/repository/models/${model}/${action}`, { method: 'POST' });
    expect((await control('llmapi', 'load')).status).toBe(200);
    expect(await served(fake.httpUrl)).toEqual(['llmapi']);
    expect((await control('llmapi', 'unload')).status).toBe(200);
    expect(await served(fake.httpUrl)).toEqual([]);
    await using plain = await startFakeTriton();
    const refused = await fetch(`${plain.httpUrl}/v2/repository/models/llmapi/unload`, { method: 'POST' });
    expect(refused.status).toBe(503);
  });

  it('refuses loadModels without explicit control, an unknown model, and another mode, naming them', async () => {
    await expect(startFakeTriton({ loadModels: ['ensemble'] })).rejects.toThrow(
      "startFakeTriton: loadModels needs modelControl: 'explicit', as --load-model does",
    );
    await expect(startFakeTriton({ modelControl: 'explicit', loadModels: ['ensembel'] })).rejects.toThrow(
      /loadModels names 'ensembel', which the fake does not have \(.*\bensemble\b.*\)/,
    );
    await expect(startFakeTriton({ modelControl: 'poll' as unknown as 'explicit' })).rejects.toThrow(
      "startFakeTriton: modelControl must be 'explicit' or left out, got poll",
    );
  });
});
