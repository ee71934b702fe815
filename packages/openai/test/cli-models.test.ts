import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { modelsFromFlags } from '../src/cli-models.js';
import { runCli, servingUrl } from './cli-process.js';
import { writeLoraDir } from './npy.js';

/** The exit code and stderr of a CLI run that is expected to stop by itself. */
async function failure(child: ChildProcess): Promise<{ code: number | null; err: string }> {
  let err = '';
  child.stderr!.on('data', (d) => {
    err += String(d);
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, err };
}

async function listed(client: OpenAI): Promise<{ id: string; parent: string | null }[]> {
  const out: { id: string; parent: string | null }[] = [];
  for await (const m of client.models.list()) {
    out.push({ id: m.id, parent: (m as unknown as { parent: string | null }).parent });
  }
  return out;
}

describe('trtllm-openai serving several models', () => {
  let fake: FakeTriton;
  let triton: string;
  beforeAll(async () => {
    fake = await startFakeTriton({ grpcPort: 0, httpPort: 0 });
    triton = fake.grpcUrl.replace(/^http:/, 'grpc:');
  });
  afterAll(() => fake.close());

  test('--model twice and --lora serve each under its name, routed by model', async () => {
    const loraDir = await mkdtemp(join(tmpdir(), 'trtllm-openai-lora-'));
    await writeLoraDir(loraDir);
    const child = runCli([
      '--triton',
      triton,
      '--port',
      '0',
      '--model',
      'ensemble,name=llama',
      '--model',
      'llmapi,name=qwen',
      '--lora',
      'qwen-sql,base=qwen,task-id=2,lora-name=sql,path=/loras/sql,ckpt-source=hf',
      '--lora',
      `llama-math,base=llama,task-id=9,dir=${loraDir}`,
    ]);
    try {
      const client = new OpenAI({ baseURL: await servingUrl(child), apiKey: 'unused', maxRetries: 0 });
      expect(await listed(client)).toEqual([
        { id: 'llama', parent: null },
        { id: 'llama-math', parent: 'llama' },
        { id: 'qwen', parent: null },
        { id: 'qwen-sql', parent: 'qwen' },
      ]);
      for (const [name, tritonModel] of [
        ['llama', 'ensemble'],
        ['llama-math', 'ensemble'],
        ['qwen-sql', 'llmapi'],
      ] as const) {
        const { data, response } = await client.completions
          .create({ model: name, prompt: 'Hello', max_tokens: 2 })
          .withResponse();
        expect(data.model).toBe(name);
        const id = response.headers.get('x-request-id');
        await fake.waitForEvent((e) => e.id === id && e.model === tritonModel && e.event === 'completed');
      }
    } finally {
      child.kill('SIGKILL');
      await rm(loraDir, { recursive: true, force: true });
    }
  });

  test('--lora lora-name= on the vLLM model sends lora_name in its sampling_parameters', async () => {
    const child = runCli([
      '--triton',
      triton,
      '--port',
      '0',
      '--model',
      'vllm',
      '--lora',
      'myadapter,base=vllm,lora-name=x',
    ]);
    try {
      const baseURL = await servingUrl(child);
      const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
      expect(await listed(client)).toEqual([
        { id: 'vllm', parent: null },
        { id: 'myadapter', parent: 'vllm' },
      ]);
      // The fake's vLLM backend, like Triton's without multi_lora.json, refuses any request
      // carrying lora_name; its base model (the control) answers.
      const complete = (model: string) =>
        fetch(`${baseURL}/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model, prompt: 'Hello', max_tokens: 2 }),
        });
      const base = await complete('vllm');
      expect(base.status).toBe(200);
      // An error answer names no upstream request id: count the vLLM model's refusals instead
      // (the fake records one before it answers).
      const refusals = () => fake.events().filter((e) => e.model === 'vllm' && e.event === 'error').length;
      const before = refusals();
      const adapter = await complete('myadapter');
      expect(((await adapter.json()) as { error: { message: string } }).error.message).toContain(
        'LoRA feature is not enabled',
      );
      expect(refusals()).toBe(before + 1);
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('--config reads the models from a JSON file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trtllm-openai-config-'));
    const config = join(dir, 'models.json');
    await writeFile(
      config,
      JSON.stringify({
        models: [{ model: 'ensemble', name: 'a', adapters: [{ name: 'a-lora', taskId: 5 }] }],
      }),
    );
    const child = runCli(['--triton', triton, '--port', '0', '--config', config]);
    try {
      const client = new OpenAI({ baseURL: await servingUrl(child), apiKey: 'unused', maxRetries: 0 });
      expect(await listed(client)).toEqual([
        { id: 'a', parent: null },
        { id: 'a-lora', parent: 'a' },
      ]);
    } finally {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('--model all serves the ready text models of the repository and says which it skipped', async () => {
    const child = runCli(['--triton', triton, '--port', '0', '--model', 'all']);
    let err = '';
    child.stderr!.on('data', (d) => {
      err += String(d);
    });
    try {
      const client = new OpenAI({ baseURL: await servingUrl(child), apiKey: 'unused', maxRetries: 0 });
      const ids = (await listed(client)).map((m) => m.id);
      expect(ids).toContain('ensemble');
      expect(ids).toContain('llmapi');
      // Pre- and postprocessing take and give tensors, not text; the raw model has no tokenizer here.
      for (const skipped of ['preprocessing', 'postprocessing', 'tensorrt_llm']) {
        expect(ids).not.toContain(skipped);
        expect(err).toContain(`skipping '${skipped}'`);
      }
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('a usage error exits 2 with the usage', async () => {
    const { code, err } = await failure(runCli(['--triton', triton, '--port', '0', '--lora', 'x']));
    expect(code).toBe(2);
    expect(err).toContain('give task-id (the C++ model)');
    expect(err).toContain('Usage: trtllm-openai');
  });

  test('two models under one name exit 1 naming the duplicate', async () => {
    const { code, err } = await failure(
      runCli(['--triton', triton, '--port', '0', '--model', 'ensemble,name=x', '--model', 'llmapi,name=x']),
    );
    expect(code).toBe(1);
    expect(err).toContain('models[1].name');
  });
});

describe('the --model and --lora flags', () => {
  test.each([
    [['x,task-id=1'], ['ensemble', 'llmapi'], 'with several models, say which with base='],
    [['x,base=nope,task-id=1'], [], 'base "nope" is not a served model (ensemble)'],
    [['x'], [], 'give task-id (the C++ model)'],
    [['x,task-id=-1'], [], 'task-id must be a non-negative integer'],
    [[], ['ensemble,colour=red'], 'unknown key "colour"'],
    [[], ['ensemble,name'], '"name" is not key=value'],
    [[], ['ensemble,chat-template=nope'], 'chat-template must be one of'],
    [[], ['all', 'ensemble'], '--model all serves every model; give it alone'],
    [['x,lora-name=x,path=/p,ckpt-source=pt'], ['llmapi'], 'ckpt-source must be hf or nemo (got "pt")'],
    [['x,task-id=1,ckpt-source=hf'], ['llmapi'], 'ckpt-source is the format of the checkpoint at path'],
  ])('--lora %j with --model %j is refused: %s', (loras, models, message) => {
    expect(() => modelsFromFlags(models, loras)).toThrow(message);
  });

  test('give each adapter to the model its base names, default ensemble', () => {
    expect(modelsFromFlags([], ['sql,task-id=4'])).toEqual({
      all: false,
      models: [{ model: 'ensemble', adapters: [{ name: 'sql', taskId: 4 }] }],
    });
    const two = modelsFromFlags(
      ['ensemble,name=a,tokenizer-dir=/t', 'llmapi'],
      ['b-lora,base=llmapi,lora-name=b'],
    );
    expect(two).toEqual({
      all: false,
      models: [
        { model: 'ensemble', name: 'a', tokenizerDir: '/t' },
        { model: 'llmapi', adapters: [{ name: 'b-lora', loraName: 'b' }] },
      ],
    });
    expect(modelsFromFlags(['llmapi'], ['c,task-id=1,lora-name=c,path=/loras/c,ckpt-source=nemo'])).toEqual({
      all: false,
      models: [
        {
          model: 'llmapi',
          adapters: [{ name: 'c', taskId: 1, loraName: 'c', path: '/loras/c', ckptSource: 'nemo' }],
        },
      ],
    });
  });
});
