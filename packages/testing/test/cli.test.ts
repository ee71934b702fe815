import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

async function startCli(args: readonly string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Every line is kept from the start: a line printed while no one waits must not be lost.
  const printed: string[] = [];
  let wake = (): void => {};
  createInterface({ input: child.stdout }).on('line', (line) => {
    printed.push(line);
    wake();
  });
  /** The first line not yet taken that `match` accepts, waiting for it if need be. */
  const nextLine = async (match: RegExp): Promise<string> => {
    for (;;) {
      const i = printed.findIndex((line) => match.test(line));
      if (i >= 0) return printed.splice(i, 1)[0]!;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  };
  const first = await nextLine(/./);
  const httpUrl = /http (http:\/\/\S+)$/.exec(first)?.[1];
  return { child, first, httpUrl, nextLine };
}

describe('trtllm-fake-triton', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`prints one ready line with both URLs, serves, and exits 0 on ${signal}`, async () => {
      const { child, first } = await startCli([
        '--grpc-port',
        '0',
        '--http-port',
        '0',
        '--itl-ms',
        '1',
        '--tokens-per-turn',
        '1',
        '--cors',
      ]);
      const match =
        /^fake Triton ready: grpc (http:\/\/127\.0\.0\.1:\d+) http (http:\/\/127\.0\.0\.1:\d+)$/.exec(first);
      expect(match).not.toBeNull();
      const ready = await fetch(`${match![2]}/v2/health/ready`);
      expect(ready.status).toBe(200);
      expect(ready.headers.get('access-control-allow-origin')).toBe('*');
      child.kill(signal);
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(0);
    });
  }

  it('with --log prints one line per request as it ends: id, model, outcome and tokens', async () => {
    const { child, httpUrl, nextLine } = await startCli([
      '--grpc-port',
      '0',
      '--http-port',
      '0',
      '--itl-ms',
      '5',
      '--log',
    ]);
    const done = await fetch(`${httpUrl}/v2/models/ensemble/generate`, {
      method: 'POST',
      body: JSON.stringify({ text_input: 'What is ML?', max_tokens: 4, id: 'req-1' }),
    });
    expect(done.status).toBe(200);
    expect(await nextLine(/ ensemble /)).toMatch(/^\S+Z http ensemble request req-1: done, 4 tokens$/);

    // A stream the client leaves: the LLM-API model stops generating and logs the cancel.
    const abort = new AbortController();
    const stream = await fetch(`${httpUrl}/v2/models/llmapi/generate_stream`, {
      method: 'POST',
      body: JSON.stringify({ text_input: 'What is ML?', sampling_param_max_tokens: 2000, streaming: true }),
      signal: abort.signal,
    });
    const reader = stream.body!.getReader();
    await reader.read();
    abort.abort();
    expect(await nextLine(/ llmapi /)).toMatch(/^\S+Z http llmapi request -: cancelled, \d+ tokens$/);

    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });

  it('takes Triton’s --model-control-mode explicit and --load-model flags', async () => {
    const { child, httpUrl } = await startCli([
      '--grpc-port',
      '0',
      '--http-port',
      '0',
      '--model-control-mode',
      'explicit',
      '--load-model',
      'tensorrt_llm',
      '--load-model',
      'llmapi',
    ]);
    try {
      const index = (await (await fetch(`${httpUrl}/v2/repository/index`, { method: 'POST' })).json()) as {
        name: string;
        state?: string;
      }[];
      expect(index.filter((m) => m.state === 'READY').map((m) => m.name)).toEqual(['llmapi', 'tensorrt_llm']);
      expect((await fetch(`${httpUrl}/v2/models/ensemble/ready`)).status).toBe(400);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  it('with --batch-step-ms gives each token at a step of one clock', async () => {
    const { child, httpUrl } = await startCli([
      '--grpc-port',
      '0',
      '--http-port',
      '0',
      '--batch-step-ms',
      '40',
    ]);
    try {
      const started = performance.now();
      const done = await fetch(`${httpUrl}/v2/models/ensemble/generate`, {
        method: 'POST',
        body: JSON.stringify({ text_input: 'What is ML?', max_tokens: 4 }),
      });
      expect(done.status).toBe(200);
      // Four tokens, each at a step: at least three whole steps after the first.
      expect(performance.now() - started).toBeGreaterThanOrEqual(3 * 40);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  const refusals = [
    [['--grpc-port', 'abc'], "--grpc-port must be a non-negative integer, got 'abc'"],
    [['--tokens-per-turn', '0'], "--tokens-per-turn must be a whole number >= 1, got '0'"],
    [['--batch-step-ms', '0'], "--batch-step-ms must be a whole number >= 1, got '0'"],
    [['--model-control-mode', 'poll'], "--model-control-mode must be none or explicit, got 'poll'"],
    [['--load-model', 'ensemble'], '--load-model needs --model-control-mode explicit'],
    [
      ['--model-control-mode', 'explicit', '--load-model', 'ensembel'],
      "loadModels names 'ensembel', which the fake does not have",
    ],
  ] as const;
  for (const [args, message] of refusals) {
    it(`refuses a bad option with exit code 2 (${args.join(' ')})`, async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(2);
      expect(stderr).toContain(message);
    });
  }
});
