import { createOpenAiServer, type OpenAiServer, transportFromUrl } from '@trtllm/openai';
import type { InferRequest, Tensor, Transport } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import OpenAI, { NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

/** A real transport that also keeps every inference request it sends, to read the LoRA inputs off the wire. */
function keepingRequests(inner: Transport, sent: InferRequest[]): Transport {
  return new Proxy(inner, {
    get(target, key) {
      if (key === 'infer' || key === 'stream') {
        return (request: InferRequest, options?: unknown) => {
          sent.push(request);
          return (target[key] as (r: InferRequest, o?: unknown) => unknown).call(target, request, options);
        };
      }
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function inputValue(request: InferRequest, name: string): unknown {
  const tensor: Tensor | undefined = request.inputs.find((t) => t.name === name);
  if (tensor === undefined) return undefined;
  const [first] = Array.from(tensor.data as ArrayLike<unknown>);
  return typeof first === 'bigint'
    ? Number(first)
    : first instanceof Uint8Array
      ? Buffer.from(first).toString()
      : first;
}

describe('one server, several models and LoRA adapters', () => {
  let fake: FakeTriton;
  let transport: Transport;
  let server: OpenAiServer;
  let client: OpenAI;
  const sent: InferRequest[] = [];

  beforeAll(async () => {
    fake = await startFakeTriton({ grpcPort: 0, httpPort: 0 });
    transport = keepingRequests(transportFromUrl(fake.grpcUrl.replace(/^http:/, 'grpc:')), sent);
    server = createOpenAiServer({
      transport,
      models: [
        {
          model: 'ensemble',
          name: 'llama',
          adapters: [
            { name: 'llama-sql', taskId: 3 },
            {
              name: 'llama-math',
              taskId: 4,
              weights: { data: [0.5, -1, 2, 0.25], shape: [2, 2] },
              config: [
                [1, 0, 2],
                [2, 0, 2],
              ],
            },
          ],
        },
        {
          model: 'llmapi',
          name: 'qwen',
          adapters: [
            { name: 'qwen-chat', taskId: 7, loraName: 'chat', path: '/loras/chat', ckptSource: 'nemo' },
          ],
        },
      ],
    });
    await server.ready();
    client = new OpenAI({ baseURL: await server.listen(0), apiKey: 'sk-test', maxRetries: 0 });
  });
  afterAll(async () => {
    await server.close();
    await transport.close();
    await fake.close();
  });

  test('GET /v1/models lists every model and adapter, an adapter with its base model as parent', async () => {
    const listed: { id: string; parent: string | null }[] = [];
    for await (const m of client.models.list()) {
      listed.push({ id: m.id, parent: (m as unknown as { parent: string | null }).parent });
    }
    expect(listed).toEqual([
      { id: 'llama', parent: null },
      { id: 'llama-sql', parent: 'llama' },
      { id: 'llama-math', parent: 'llama' },
      { id: 'qwen', parent: null },
      { id: 'qwen-chat', parent: 'qwen' },
    ]);
    const adapter = await client.models.retrieve('qwen-chat');
    expect((adapter as unknown as { parent: string }).parent).toBe('qwen');
  });

  test.each([
    ['llama', 'ensemble'],
    ['qwen', 'llmapi'],
  ])('a request for %s runs on the Triton model %s and answers under its name', async (name, tritonModel) => {
    const { data, response } = await client.completions
      .create({ model: name, prompt: 'Hello', max_tokens: 3 })
      .withResponse();
    expect(data.model).toBe(name);
    const id = response.headers.get('x-request-id');
    // An ensemble's inner model logs the same id: the outer model's own event is the one asked for.
    const done = await fake.waitForEvent((e) => e.id === id && e.model === tritonModel);
    expect(done.event).toBe('received');
    const request = sent.find((r) => r.id === id);
    expect(request?.inputs.some((t) => t.name.startsWith('lora_'))).toBe(false);
  });

  test("an adapter's request carries the C++ model's lora_task_id", async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'llama-sql', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 3 })
      .withResponse();
    expect(data.model).toBe('llama-sql');
    const request = sent.find((r) => r.id === response.headers.get('x-request-id'));
    expect(request?.model).toBe('ensemble');
    expect(inputValue(request!, 'lora_task_id')).toBe(3);
  });

  test('an adapter with weights sends them and its config with its first request only, then its task id', async () => {
    const ids: (string | null)[] = [];
    for (let i = 0; i < 2; i++) {
      const { response } = await client.completions
        .create({ model: 'llama-math', prompt: 'Hi', max_tokens: 2 })
        .withResponse();
      ids.push(response.headers.get('x-request-id'));
    }
    const [first, second] = ids.map((id) => sent.find((r) => r.id === id)!);
    expect(inputValue(first!, 'lora_task_id')).toBe(4);
    expect(first!.inputs.find((t) => t.name === 'lora_weights')?.shape).toEqual([1, 2, 2]);
    expect(first!.inputs.find((t) => t.name === 'lora_config')?.shape).toEqual([1, 2, 3]);
    expect(inputValue(second!, 'lora_task_id')).toBe(4);
    expect(second!.inputs.some((t) => t.name === 'lora_weights' || t.name === 'lora_config')).toBe(false);
  });

  test('after Triton says the task is not in its LoRA cache, the next request sends the weights again', async () => {
    // TensorRT-LLM's words when its LoRA cache evicted the task.
    const message = 'LoRA task 4 not found in cache. Please send LoRA weights with request';
    fake.setFaults({ statusOnce: { grpc: 3, http: 400, message } });
    const err = await client.completions
      .create({ model: 'llama-math', prompt: 'Hi', max_tokens: 2 })
      .catch((e: unknown) => e);
    expect((err as Error).message).toContain('not found in cache');
    const { response } = await client.completions
      .create({ model: 'llama-math', prompt: 'Hi', max_tokens: 2 })
      .withResponse();
    const again = sent.find((r) => r.id === response.headers.get('x-request-id'))!;
    expect(again.inputs.some((t) => t.name === 'lora_weights')).toBe(true);
  });

  test('an adapter of the LLM-API model carries lora_id, lora_name, lora_path and lora_ckpt_source, streaming too', async () => {
    const { data: stream, response } = await client.completions
      .create({ model: 'qwen-chat', prompt: 'Hi', max_tokens: 3, stream: true })
      .withResponse();
    const models = new Set<string>();
    for await (const chunk of stream) models.add(chunk.model);
    expect([...models]).toEqual(['qwen-chat']);
    const request = sent.find((r) => r.id === response.headers.get('x-request-id'));
    expect(request?.model).toBe('llmapi');
    expect(inputValue(request!, 'lora_id')).toBe(7);
    expect(inputValue(request!, 'lora_name')).toBe('chat');
    expect(inputValue(request!, 'lora_path')).toBe('/loras/chat');
    expect(inputValue(request!, 'lora_ckpt_source')).toBe('nemo');
  });

  test('a model the server does not serve is a 404 model_not_found naming every served model', async () => {
    const err = await client.completions
      .create({ model: 'gpt-4o', prompt: 'Hi', max_tokens: 2 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).code).toBe('model_not_found');
    for (const id of ['llama', 'llama-sql', 'llama-math', 'qwen', 'qwen-chat']) {
      expect((err as NotFoundError).message).toContain(`'${id}'`);
    }
    await expect(client.models.retrieve('gpt-4o')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('the models option is checked when the server is created', () => {
  const transport = transportFromUrl('grpc://127.0.0.1:1');
  afterAll(() => transport.close());

  test.each([
    [
      'a name served twice',
      [{ model: 'ensemble' }, { model: 'llmapi', adapters: [{ name: 'ensemble', taskId: 1 }] }],
      'models[1].adapters[0].name',
    ],
    [
      'an adapter without LoRA inputs',
      [{ model: 'ensemble', adapters: [{ name: 'sql' }] }],
      'models[0].adapters[0]',
    ],
    [
      'a negative task id',
      [{ model: 'ensemble', adapters: [{ name: 'sql', taskId: -1 }] }],
      'models[0].adapters[0].taskId',
    ],
    [
      'a checkpoint source other than hf or nemo',
      [{ model: 'llmapi', adapters: [{ name: 'sql', path: '/loras/sql', ckptSource: 'safetensors' }] }],
      'models[0].adapters[0].ckptSource',
    ],
    [
      'a checkpoint source without a path',
      [{ model: 'llmapi', adapters: [{ name: 'sql', taskId: 1, ckptSource: 'hf' }] }],
      'models[0].adapters[0].ckptSource',
    ],
    ['no model', [{ name: 'x' }], 'models[0].model'],
    ['an empty list', [], 'models'],
  ])('%s is an invalid_argument naming the field', (_, models, field) => {
    let err: unknown;
    try {
      createOpenAiServer({ transport, models: models as never });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'invalid_argument', field });
  });
});
