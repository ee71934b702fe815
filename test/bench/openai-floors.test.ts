import { startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driveCompletions } from '../../bench/openai/load.js';
import { type FloorName, type FrontEnd, startFloor } from '../../bench/openai/servers.js';
import { socketProbeVariant } from '../../bench/overhead/variants/socket-probe.js';

type Fake = Awaited<ReturnType<typeof startFakeTriton>>;
let fake: Fake;
const floors = new Map<FloorName, FrontEnd>();
const NAMES: readonly FloorName[] = ['node floor', 'net floor'];

beforeAll(async () => {
  fake = await startFakeTriton();
  for (const name of NAMES) floors.set(name, await startFloor(name, fake.grpcUrl, undefined));
}, 60_000);

afterAll(async () => {
  await Promise.all([...floors.values()].map((f) => f.stop()));
  await fake?.close();
});

/** The text of one streamed completion, read with fetch and parsed by hand. */
async function completionText(baseUrl: string, prompt: string, maxTokens: number): Promise<string> {
  const res = await fetch(`${baseUrl}/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'ensemble', prompt, max_tokens: maxTokens, stream: true }),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const body = await res.text();
  expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
  let text = '';
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    text += (JSON.parse(line.slice(6)) as { choices: { text: string }[] }).choices[0]!.text;
  }
  return text;
}

describe('bench:openai floors', () => {
  it.each(NAMES)('%s streams every token of every request on keep-alive connections', async (name) => {
    const floor = floors.get(name)!;
    const load = await driveCompletions({
      baseUrl: floor.baseUrl,
      model: 'ensemble',
      concurrency: 8,
      requests: 40,
      maxTokens: 32,
    });
    expect(load.requests).toBe(40);
    expect(load.textChunks).toBe(40 * 32);
    // One more event per request: the finish reason.
    expect(load.events).toBe(40 * 33);
    expect(floor.cpuMs()).toBeGreaterThan(0);
  });

  it("both floors pass on the fake's text unchanged, as the socket probe reads it", async () => {
    const probe = socketProbeVariant({ grpcUrl: fake.grpcUrl, httpUrl: '' });
    try {
      const prompt = 'Why is the sky blue?';
      let direct = '';
      await probe.streamText(prompt, 12, 0, (piece) => {
        direct += piece;
      });
      expect(direct.length).toBeGreaterThan(0);
      for (const name of NAMES) {
        expect(await completionText(floors.get(name)!.baseUrl, prompt, 12)).toBe(direct);
      }
    } finally {
      await probe.close();
    }
  });
});
