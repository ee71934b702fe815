import { once } from 'node:events';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli } from './cli-process.js';

/** The first match of `pattern` in what `stream` writes. */
async function awaitOutput(stream: NodeJS.ReadableStream, pattern: RegExp): Promise<RegExpExecArray> {
  let out = '';
  for await (const piece of stream) {
    out += String(piece);
    const match = pattern.exec(out);
    if (match) return match;
  }
  throw new Error(`the CLI ended without printing ${pattern}: ${out}`);
}

/** A streamed completion whose first event has arrived. */
async function openStream(baseURL: string, maxTokens: number) {
  const res = await fetch(`${baseURL}/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'ensemble', prompt: 'Hello', max_tokens: maxTokens, stream: true }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value, { stream: true });
  return {
    id: res.headers.get('x-request-id'),
    /** Everything the server sends until it ends the response. */
    async rest(): Promise<string> {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

describe('trtllm-openai on SIGTERM', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton({ grpcPort: 0, httpPort: 0, itlMs: 10 });
  });
  afterAll(() => fake.close());
  const triton = () => fake.grpcUrl.replace(/^http:/, 'grpc:');

  test('lets a stream in flight finish, answers /health and new requests 503, and exits 0', async () => {
    const child = runCli(['--triton', triton(), '--port', '0', '--drain-timeout', '60']);
    try {
      const baseURL = (await awaitOutput(child.stdout!, /at (http:\/\/\S+)/))[1]!;
      const origin = new URL(baseURL).origin;
      expect((await fetch(`${origin}/health`)).status).toBe(200);
      const stream = await openStream(baseURL, 40);
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await awaitOutput(child.stderr!, /SIGTERM: draining/);

      const health = await fetch(`${origin}/health`);
      expect(health.status).toBe(503);
      expect(await health.json()).toEqual({ status: 'draining' });
      const refused = await fetch(`${baseURL}/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'ensemble', prompt: 'Hi', max_tokens: 2 }),
      });
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('unavailable');

      const text = await stream.rest();
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(text).not.toContain('"error"');
      const completed = await fake.waitForEvent(
        (e) => e.id === stream.id && e.model === 'ensemble' && e.event !== 'received',
      );
      expect(completed.event).toBe('completed');
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  test('past --drain-timeout ends a stream with a last SSE error event, cancels it upstream, and exits 0', async () => {
    const child = runCli(['--triton', triton(), '--port', '0', '--drain-timeout', '0.3']);
    try {
      const baseURL = (await awaitOutput(child.stdout!, /at (http:\/\/\S+)/))[1]!;
      const stream = await openStream(baseURL, 5000);
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const text = await stream.rest();
      const events = text
        .split('\n\n')
        .filter((e) => e.startsWith('data: '))
        .map((e) => e.slice('data: '.length));
      expect(events).not.toContain('[DONE]');
      const last = JSON.parse(events.at(-1)!) as { error: { code: string; message: string } };
      expect(last.error.code).toBe('unavailable');
      expect(last.error.message).toContain('drain timeout 300 ms');
      const ended = await fake.waitForEvent(
        (e) =>
          e.id === stream.id && e.model === 'ensemble' && (e.event === 'cancelled' || e.event === 'stopped'),
      );
      expect(ended.tokens).toBeLessThan(5000);
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
