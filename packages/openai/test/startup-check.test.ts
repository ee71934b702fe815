import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAiServer, transportFromUrl } from '@trtllm/openai';
import { TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { closedPort } from '../../../test/reliability/support/processes.js';
import { runCli as spawnCli } from './cli-process.js';
import { generated } from './expected.js';

/** The CLI on a free port, with its output collected as it comes. */
function runCli(args: readonly string[]): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawnCli(['--port', '0', ...args]);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => {
    out += String(d);
  });
  child.stderr!.on('data', (d) => {
    err += String(d);
  });
  return { child, out: () => out, err: () => err };
}

/** Resolves once `text()` matches `pattern` (checked on every piece the stream delivers). */
async function seen(
  stream: NodeJS.ReadableStream,
  text: () => string,
  pattern: RegExp,
): Promise<RegExpExecArray> {
  for (;;) {
    const match = pattern.exec(text());
    if (match) return match;
    await once(stream, 'data');
  }
}

/** The exit code of a CLI expected to refuse at start; one that serves instead is killed (exit null). */
async function refusedAt(run: ReturnType<typeof runCli>): Promise<number | null> {
  const serving = seen(run.child.stdout!, run.out, /serving/).then(() => run.child.kill('SIGKILL'));
  serving.catch(() => undefined);
  return exitCode(run.child);
}

async function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const [code] = await once(child, 'exit');
  return code as number | null;
}

/** The smallest Hugging Face tokenizer.json: enough for the CLI to have a tokenizer, not the fake's vocabulary. */
const WORD_LEVEL_TOKENIZER = {
  version: '1.0',
  added_tokens: [],
  normalizer: null,
  pre_tokenizer: { type: 'Whitespace' },
  post_processor: null,
  decoder: null,
  model: { type: 'WordLevel', vocab: { '<unk>': 0, Hello: 1 }, unk_token: '<unk>' },
};

const grpcUrl = (fake: FakeTriton) => fake.grpcUrl.replace(/^http:/, 'grpc:');

describe('trtllm-openai checks Triton at start', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton({ grpcPort: 0, httpPort: 0 });
  });
  afterAll(() => fake.close());

  test('a misspelt --model exits 1 listing the server’s models and the closest, without serving', async () => {
    for (const triton of [grpcUrl(fake), fake.httpUrl]) {
      const run = runCli(['--triton', triton, '--model', 'ensembel']);
      expect(await exitCode(run.child), triton).toBe(1);
      const err = run.err();
      expect(err).toContain(`model 'ensembel' is not on Triton at ${triton}`);
      expect(err).toMatch(/its models: .*\bensemble\b.*\btensorrt_llm\b/);
      expect(err).toContain("did you mean 'ensemble'?");
      expect(err).toContain('--model');
      expect(run.out()).not.toContain('serving');
    }
  });

  test('a missing model among several --model flags exits 1 naming it and the closest, serving none', async () => {
    for (const triton of [grpcUrl(fake), fake.httpUrl]) {
      // The missing one last: the models before it pass the check, and still nothing is served.
      const run = runCli(['--triton', triton, '--model', 'ensemble', '--model', 'tensorrt_llm_blz']);
      expect(await refusedAt(run), triton).toBe(1);
      const err = run.err();
      expect(err).toContain(`model 'tensorrt_llm_blz' is not on Triton at ${triton} (its models: `);
      expect(err).toContain("did you mean 'tensorrt_llm_bls'? check --model");
      expect(err).not.toContain("model 'ensemble'");
      expect(run.out()).not.toContain('serving');
    }
  });

  test('a missing model in --config exits 1 naming the file and its place there, serving none', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trtllm-openai-config-'));
    try {
      const config = join(dir, 'models.json');
      await writeFile(
        config,
        JSON.stringify({
          models: [{ model: 'ensemble' }, { model: 'tensorrt_llm_bls', name: 'bls' }, { model: 'llmapu' }],
        }),
      );
      const run = runCli(['--triton', fake.httpUrl, '--config', config]);
      expect(await refusedAt(run)).toBe(1);
      const err = run.err();
      expect(err).toContain(`model 'llmapu' is not on Triton at ${fake.httpUrl} (its models: `);
      expect(err).toContain(`did you mean 'llmapi'? check --config ${config}: models[2].model`);
      expect(run.out()).not.toContain('serving');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an unreachable Triton is tried again with a line per attempt, then exits 1 after --triton-wait', async () => {
    const triton = `grpc://127.0.0.1:${await closedPort()}`;
    const started = performance.now();
    const run = runCli(['--triton', triton, '--triton-wait', '1.5']);
    expect(await exitCode(run.child)).toBe(1);
    const lines = run.err().trim().split('\n');
    const attempts = lines.filter((l) =>
      /^trtllm-openai: Triton at \S+ did not answer .*; attempt \d+, trying again/.test(l),
    );
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts[0]).toContain(`Triton at ${triton} did not answer (connection failed`);
    expect(attempts[0]).toContain('attempt 1,');
    expect(attempts[1]).toContain('attempt 2,');
    expect(lines.at(-1)).toMatch(/gave up after \d+ attempts in 1\.5 s \(--triton-wait\)$/);
    expect(run.out()).not.toContain('serving');
    // The wait was honoured, not cut short at the first refusal.
    expect(performance.now() - started).toBeGreaterThan(1500);
  });

  test('a gRPC address at Triton’s HTTP port exits at once, hinting the http:// address', async () => {
    const hostPort = new URL(fake.httpUrl).host;
    const run = runCli(['--triton', `grpc://${hostPort}`, '--triton-wait', '30']);
    expect(await exitCode(run.child)).toBe(1);
    const err = run.err();
    expect(err).toContain('this is not a gRPC endpoint');
    expect(err).toContain(`use --triton http://${hostPort} if this is its HTTP port`);
    expect(err).not.toContain('httpTransport');
    expect(err).not.toContain('attempt 1');
  });

  test('a gRPC address at Triton’s HTTP port is quoted as given, not as the http:// origin it dials', async () => {
    const hostPort = new URL(fake.httpUrl).host;
    const run = runCli(['--triton', `grpc://${hostPort}`, '--triton-wait', '30']);
    expect(await refusedAt(run)).toBe(1);
    const err = run.err();
    expect(err).toContain(`Triton at grpc://${hostPort}: the server at grpc://${hostPort} answered HTTP/1.1`);
    expect(err).not.toContain('the server at http://');
  });

  test('the raw tensorrt_llm model without --tokenizer-dir exits 1 naming --tokenizer-dir, without serving', async () => {
    for (const triton of [grpcUrl(fake), fake.httpUrl]) {
      const run = runCli(['--triton', triton, '--model', 'tensorrt_llm']);
      expect(await refusedAt(run), triton).toBe(1);
      const err = run.err();
      expect(err).toContain(
        `model 'tensorrt_llm' on Triton at ${triton} is the raw tensorrt_llm model, which takes and returns token ids`,
      );
      expect(err).toContain("give --tokenizer-dir <the model's Hugging Face tokenizer directory");
      // Core's wording names an SDK step the CLI user never took.
      expect(err).not.toContain('TritonLlm');
      expect(run.out()).not.toContain('serving');
    }
  });

  test('the raw model with a --tokenizer-dir without tokenizer.json exits 1 naming it; with one it serves', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trtllm-openai-raw-'));
    try {
      await writeFile(join(dir, 'chat_template.jinja'), '{{ messages[0].content }}');
      const run = runCli(['--triton', grpcUrl(fake), '--model', 'tensorrt_llm', '--tokenizer-dir', dir]);
      expect(await refusedAt(run)).toBe(1);
      expect(run.err()).toContain(`--tokenizer-dir ${dir} has no tokenizer.json (only a chat template)`);
      // With a tokenizer.json beside the template, the same directory serves the raw model.
      await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(WORD_LEVEL_TOKENIZER));
      const served = runCli(['--triton', grpcUrl(fake), '--model', 'tensorrt_llm', '--tokenizer-dir', dir]);
      try {
        await seen(served.child.stdout!, served.out, /serving 'tensorrt_llm'/);
      } finally {
        served.child.kill('SIGKILL');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a Triton that starts after the CLI is waited for, and then served', async () => {
    const port = await closedPort();
    const run = runCli(['--triton', `grpc://127.0.0.1:${port}`, '--triton-wait', '30']);
    let late: FakeTriton | undefined;
    try {
      // Triton comes up only once the CLI has reported its first failed attempt.
      await seen(run.child.stderr!, run.err, /attempt 1,/);
      late = await startFakeTriton({ grpcPort: port, httpPort: 0 });
      const [, baseURL] = await seen(run.child.stdout!, run.out, /serving 'ensemble' at (http:\/\/\S+)/);
      const client = new OpenAI({ baseURL: baseURL!, apiKey: 'unused', maxRetries: 0 });
      const r = await client.completions.create({ model: 'ensemble', prompt: 'Hello', max_tokens: 5 });
      expect(r.choices[0]!.text).toBe(generated('Hello', { maxTokens: 5 })[0]!.text);
    } finally {
      run.child.kill('SIGKILL');
      await late?.close();
    }
  });
});

describe('trtllm-openai at start, on a fake Triton under explicit model control', () => {
  test('a ready BLS whose tensorrt_llm is not loaded is waited for, naming that model, then served once it loads', async () => {
    // The BLS and the two models it calls by name, not its tensorrt_llm: Triton keeps such a BLS ready.
    await using fake = await startFakeTriton({
      modelControl: 'explicit',
      loadModels: ['tensorrt_llm_bls', 'preprocessing', 'postprocessing'],
    });
    // Never loaded the first time; the second, unloaded after the first round, as Triton lists it then.
    for (const [triton, state] of [
      [grpcUrl(fake), 'not loaded'],
      [fake.httpUrl, 'UNAVAILABLE: unloaded'],
    ] as const) {
      const run = runCli(['--triton', triton, '--model', 'tensorrt_llm_bls', '--triton-wait', '30']);
      try {
        const [line] = await seen(run.child.stderr!, run.err, /.*attempt 1,.*/);
        expect(line).toContain(
          `model 'tensorrt_llm_bls' on Triton at ${triton} calls 'tensorrt_llm' (its config parameter tensorrt_llm_model_name), which is not ready (${state}); attempt 1,`,
        );
        const load = await fetch(`${fake.httpUrl}/v2/repository/models/tensorrt_llm/load`, {
          method: 'POST',
        });
        expect(load.status).toBe(200);
        const [, baseURL] = await seen(
          run.child.stdout!,
          run.out,
          /serving 'tensorrt_llm_bls' at (http:\/\/\S+)/,
        );
        const client = new OpenAI({ baseURL: baseURL!, apiKey: 'unused', maxRetries: 0 });
        const r = await client.completions.create({
          model: 'tensorrt_llm_bls',
          prompt: 'Hello',
          max_tokens: 5,
        });
        expect(r.choices[0]!.text).toBe(generated('Hello', { maxTokens: 5 })[0]!.text);
      } finally {
        run.child.kill('SIGKILL');
        await fetch(`${fake.httpUrl}/v2/repository/models/tensorrt_llm/unload`, { method: 'POST' });
      }
    }
  });
});

describe('createOpenAiServer().ready()', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton({ grpcPort: 0, httpPort: 0 });
  });
  afterAll(() => fake.close());

  test('resolves for a served model, and rejects a missing one with not_found naming the models', async () => {
    const transport = transportFromUrl(grpcUrl(fake));
    try {
      await createOpenAiServer({ transport, model: 'ensemble' }).ready();
      const err = await createOpenAiServer({ transport, model: 'ensembel' })
        .ready()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TritonLlmError);
      expect((err as TritonLlmError).code).toBe('not_found');
      expect((err as TritonLlmError).message).toContain("model 'ensembel' is not on Triton (its models: ");
      expect((err as TritonLlmError).message).toContain("did you mean 'ensemble'? check model");
    } finally {
      await transport.close();
    }
  });

  test('warns once per failed attempt and rejects unavailable after tritonWaitMs', async () => {
    const transport = transportFromUrl(`http://127.0.0.1:${await closedPort()}`);
    const warnings: string[] = [];
    try {
      const server = createOpenAiServer({
        transport,
        model: 'ensemble',
        tritonWaitMs: 800,
        logger: { warn: (m) => warnings.push(m) },
      });
      const err = await server.ready().catch((e: unknown) => e);
      expect((err as TritonLlmError).code).toBe('unavailable');
      expect((err as TritonLlmError).message).toMatch(
        /gave up after \d+ attempts in 0\.8 s \(tritonWaitMs\)$/,
      );
      expect(warnings.length).toBeGreaterThanOrEqual(1);
      for (const [i, w] of warnings.entries()) expect(w).toContain(`attempt ${i + 1},`);
    } finally {
      await transport.close();
    }
  });
});
