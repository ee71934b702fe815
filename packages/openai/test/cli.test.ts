import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli, servingUrl } from './cli-process.js';
import { generated } from './expected.js';

describe('trtllm-openai CLI', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton({ grpcPort: 0, httpPort: 0 });
  });
  afterAll(() => fake.close());

  test('serves the model named by --triton grpc://… and --served-model-name, and stops on SIGTERM', async () => {
    const child = runCli([
      '--triton',
      fake.grpcUrl.replace(/^http:/, 'grpc:'),
      '--model',
      'ensemble',
      '--served-model-name',
      'llm',
      '--port',
      '0',
      '--api-key',
      'sk-cli',
    ]);
    try {
      const baseURL = await servingUrl(child);
      const client = new OpenAI({ baseURL, apiKey: 'sk-cli', maxRetries: 0 });
      const r = await client.completions.create({ model: 'llm', prompt: 'Hello', max_tokens: 5 });
      expect(r.choices[0]!.text).toBe(generated('Hello', { maxTokens: 5 })[0]!.text);
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  test('serves over --triton dns:host:port and over an http:// address', async () => {
    for (const [triton, protocol] of [
      [`dns:${new URL(fake.grpcUrl).host}`, 'grpc'],
      [fake.httpUrl, 'http'],
    ] as const) {
      const child = runCli(['--triton', triton, '--port', '0']);
      try {
        const client = new OpenAI({ baseURL: await servingUrl(child), apiKey: 'unused', maxRetries: 0 });
        const before = fake.events().length;
        const r = await client.completions.create({ model: 'ensemble', prompt: 'Hello', max_tokens: 5 });
        expect(r.choices[0]!.text).toBe(generated('Hello', { maxTokens: 5 })[0]!.text);
        expect(fake.events().slice(before)[0]).toMatchObject({ event: 'received', protocol });
      } finally {
        child.kill('SIGKILL');
      }
    }
  });

  test('an unknown --triton scheme exits 1 naming the address, without serving', async () => {
    const child = runCli(['--triton', 'ftp://triton:8001', '--port', '0']);
    let err = '';
    let out = '';
    child.stderr!.on('data', (d) => {
      err += String(d);
    });
    child.stdout!.on('data', (d) => {
      out += String(d);
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(err).toContain('--triton: must start with grpc://, grpcs://, http://, https:// or dns:');
    expect(err).toContain('"ftp://triton:8001"');
    expect(out).not.toContain('serving');
  });

  test('a --tokenizer-dir with neither tokenizer.json nor a chat template exits 1 naming it, without serving', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trtllm-openai-cli-'));
    try {
      const child = runCli([
        '--triton',
        fake.grpcUrl.replace(/^http:/, 'grpc:'),
        '--port',
        '0',
        '--tokenizer-dir',
        dir,
      ]);
      let err = '';
      child.stderr!.on('data', (d) => {
        err += String(d);
      });
      const [code] = await once(child, 'exit');
      expect(code).toBe(1);
      expect(err).toContain(`--tokenizer-dir: ${dir} has no tokenizer.json`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('refuses an unknown chat template with a usage message', async () => {
    const child = runCli(['--chat-template', 'vicuna']);
    let err = '';
    child.stderr!.on('data', (d) => {
      err += String(d);
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(err).toContain('--chat-template must be one of auto, chatml, llama2, llama3');
  });

  test('--tool-call-parser picks the format calls are read in', async () => {
    // ChatML would mean hermes under auto; the flag makes a Llama-style JSON answer a call.
    const child = runCli([
      '--triton',
      fake.grpcUrl.replace(/^http:/, 'grpc:'),
      '--port',
      '0',
      '--tool-call-parser',
      'llama3_json',
    ]);
    try {
      const client = new OpenAI({ baseURL: await servingUrl(child), apiKey: 'unused', maxRetries: 0 });
      const r = await client.chat.completions.create({
        model: 'ensemble',
        messages: [{ role: 'user', content: fakeScript('{"name": "f", "parameters": {"x": 1}}') }],
        tools: [{ type: 'function', function: { name: 'f' } }],
      });
      const call = r.choices[0]!.message.tool_calls?.[0] as { function: unknown } | undefined;
      expect(call?.function).toEqual({ name: 'f', arguments: '{"x":1}' });
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('refuses an unknown tool-call parser with a usage message', async () => {
    const child = runCli(['--tool-call-parser', 'mistral']);
    let err = '';
    child.stderr!.on('data', (d) => {
      err += String(d);
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(err).toContain('--tool-call-parser must be one of auto, hermes, llama3_json');
  });
});
