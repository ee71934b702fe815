import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readSamples, sampleValue } from './prometheus-text.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

/** Everything a stream has written so far, and a wait for a pattern in it (the stream keeps flowing). */
function collect(stream: NodeJS.ReadableStream) {
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (piece: string) => {
    text += piece;
  });
  return {
    get text() {
      return text;
    },
    /** Resolves once `count` matches of `pattern` (global) have been written. */
    async matches(pattern: RegExp, count: number): Promise<RegExpExecArray[]> {
      for (;;) {
        const found = [...text.matchAll(pattern)];
        if (found.length >= count) return found;
        const ended = once(stream, 'end').then(() => 'end' as const);
        const more = once(stream, 'data').then(() => 'data' as const);
        if ((await Promise.race([ended, more])) === 'end' && [...text.matchAll(pattern)].length < count)
          throw new Error(`the CLI ended without printing ${pattern} ${count} times: ${text}`);
      }
    },
  };
}

/** The CLI from source, as a real process tree (a primary and its cluster workers). */
function runCli(args: readonly string[]) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', cli, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, stdout: collect(child.stdout!), stderr: collect(child.stderr!) };
}

/** One request on a connection of its own, so that the cluster hands each to the next worker. */
function send(
  url: string,
  method: string,
  body?: unknown,
): Promise<{ status: number; worker: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (piece: string) => {
          text += piece;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode!, worker: String(res.headers['x-trtllm-worker']), text }),
        );
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const SERVING = /serving '\S+' at (http:\/\/\S+) \(worker (\d+)\)/g;

describe('trtllm-openai --workers', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton({ grpcPort: 0, httpPort: 0, itlMs: 10 });
  });
  afterAll(() => fake.close());
  const triton = () => fake.grpcUrl.replace(/^http:/, 'grpc:');

  test('two workers share the port, /metrics of either is the sum, a dead worker is replaced, SIGTERM drains both and exits 0', async () => {
    const run = runCli(['--triton', triton(), '--port', '0', '--workers', '2', '--drain-timeout', '60']);
    try {
      const lines = await run.stdout.matches(SERVING, 2);
      const baseURL = lines[0]![1]!;
      expect(lines[1]![1]).toBe(baseURL);
      const pids = new Set(lines.map((m) => m[2]!));
      expect(pids.size).toBe(2);

      const sent = 8;
      const answeredBy = new Set<string>();
      for (let i = 0; i < sent; i++) {
        const res = await send(`${baseURL}/completions`, 'POST', {
          model: 'ensemble',
          prompt: 'Hello',
          max_tokens: 2,
        });
        expect(res.status).toBe(200);
        answeredBy.add(res.worker);
      }
      expect(answeredBy).toEqual(pids);

      // Each worker counted only its own share; whichever answers /metrics gives every worker's sum.
      const scrapedBy = new Set<string>();
      for (let i = 0; i < 10 && scrapedBy.size < 2; i++) {
        const scraped = await send(new URL('/metrics', baseURL).href, 'GET');
        expect(scraped.status).toBe(200);
        scrapedBy.add(scraped.worker);
        const samples = readSamples(scraped.text);
        expect(
          sampleValue(samples, 'trtllm:http_requests_total', {
            model_name: 'ensemble',
            endpoint: '/v1/completions',
            status: '200',
          }),
        ).toBe(sent);
      }
      expect(scrapedBy).toEqual(pids);

      const [victim] = [...pids];
      process.kill(Number(victim), 'SIGKILL');
      await run.stderr.matches(
        new RegExp(`worker ${victim} died \\(signal SIGKILL\\); starting another`, 'g'),
        1,
      );
      const after = await run.stdout.matches(SERVING, 3);
      const replacement = after[2]![2]!;
      expect(pids.has(replacement)).toBe(false);

      // A stream in flight on a worker when the primary gets SIGTERM ends whole.
      const res = await fetch(`${baseURL}/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'ensemble', prompt: 'Hello', max_tokens: 40, stream: true }),
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = decoder.decode((await reader.read()).value, { stream: true });
      const exited = once(run.child, 'exit');
      run.child.kill('SIGTERM');
      await run.stderr.matches(/SIGTERM: every worker drains/g, 1);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(text).not.toContain('"error"');
      const [code] = await exited;
      expect(code).toBe(0);
      // Both live workers drained (each logs it) before the primary left.
      expect([...run.stderr.text.matchAll(/SIGTERM: draining/g)]).toHaveLength(2);
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  });

  test('a worker that fails at start (Triton not answering) stops the gateway with its exit code, not a restart loop', async () => {
    const run = runCli([
      '--triton',
      'grpc://127.0.0.1:1',
      '--triton-wait',
      '0',
      '--port',
      '0',
      '--workers',
      '2',
    ]);
    const [code] = await once(run.child, 'close');
    expect(code).toBe(1);
    expect(run.stderr.text).toMatch(/worker \d+ failed to start \(code 1\); stopping/);
    expect(run.stderr.text).not.toContain('starting another');
  });

  test.each([['0'], ['257'], ['1.5'], ['two'], ['']])(
    '--workers %j is a usage error naming the flag and value',
    async (value) => {
      const run = runCli(['--triton', triton(), '--workers', value]);
      // 'close': the process has exited and its output is all read.
      const [code] = await once(run.child, 'close');
      expect(code).toBe(2);
      expect(run.stderr.text).toContain(
        `--workers must be an integer from 1 to 256 or auto (got ${JSON.stringify(value)})`,
      );
    },
  );
});
