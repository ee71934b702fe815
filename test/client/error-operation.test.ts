/**
 * Errors lead with the call the user made (`generate on 'ensemble' failed: ...`); the step that
 * failed inside (reading the model config, the stream) stays in the message as its detail, and
 * `err.operation` names the call for code. Bad input keeps its field-first message.
 */
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { TritonLlm } from '@trtllm/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { failure } from '../support/failure.js';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

describe.each(PROTOCOLS)('errors name the user operation (%s)', (protocol) => {
  const fake = useFakeTriton();
  afterEach(() => fake.triton().setFaults(undefined));

  it('generate on a model the server does not have: the call first, the config read as detail', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'no_such_model' });
    const err = await failure(llm.generate({ prompt: 'Hi', maxTokens: 4 }));
    expect(err.code).toBe('not_found');
    expect(err.operation).toBe('generate');
    expect(err.message.startsWith("generate on 'no_such_model' failed: ")).toBe(true);
    // The internal step is still there, after the operation.
    expect(err.message.slice("generate on 'no_such_model' failed: ".length)).toMatch(/config/i);
  });

  it('stream: an error in the middle of a stream leads with stream, after the chunks it delivered', async () => {
    fake.triton().setFaults({ errorAfterTokens: 3 });
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const texts: string[] = [];
    const err = await failure(async () => {
      for await (const chunk of llm.stream({ prompt: 'Hi', maxTokens: 20 })) texts.push(chunk.text);
    });
    expect(texts.length).toBeGreaterThan(0);
    expect(err.operation).toBe('stream');
    expect(err.message.startsWith("stream on 'ensemble' failed: ")).toBe(true);
    expect(err.requestId).toMatch(/^\d+$/);
  });

  it('infer and the server calls name themselves; a model call names its model', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'no_such_model' });
    const stats = await failure(llm.statistics());
    expect(stats.message.startsWith("statistics on 'no_such_model' failed: ")).toBe(true);
    const infer = await failure(llm.infer({ model: 'no_such_model', inputs: [] }));
    expect(infer.operation).toBe('infer');
    expect(infer.message.startsWith("infer on 'no_such_model' failed: ")).toBe(true);
  });

  it('a server that is not there: health failed, with the connection error after it', async () => {
    const llm = new TritonLlm({
      transport:
        protocol === 'grpc'
          ? grpcTransport({ baseUrl: 'http://127.0.0.1:1' })
          : httpTransport({ baseUrl: 'http://127.0.0.1:1' }),
      model: 'ensemble',
      retry: { attempts: 1 },
    });
    const err = await failure(llm.health());
    expect(err.code).toBe('unavailable');
    expect(err.operation).toBe('health');
    expect(err.message.startsWith('health failed: ')).toBe(true);
  });

  it('bad input keeps its message, which names the field first', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const err = await failure(async () => llm.generate({ prompt: 'Hi', maxTokens: -1 }));
    expect(err.field).toBe('maxTokens');
    expect(err.message.startsWith('maxTokens:')).toBe(true);
  });
});
