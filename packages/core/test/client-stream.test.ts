/**
 * What `TritonLlm.stream()` returns, before and around iteration: input checked at the call,
 * stop() and return() before the first chunk, and a stream that is read only once.
 */
import { describe, expect, it } from 'vitest';
import { type StreamChunk, TritonLlm, TritonLlmError } from '../src/index.js';
import { ensemble, ScriptedTransport, text } from './scripted-transport.js';

function client(...steps: ConstructorParameters<typeof ScriptedTransport>[1]): {
  llm: TritonLlm;
  wire: ScriptedTransport;
} {
  const wire = new ScriptedTransport(ensemble(), steps);
  return { llm: new TritonLlm({ transport: wire, model: 'ensemble', logger: { warn: () => {} } }), wire };
}

/** Every stream the transport opened was also ended: by its last response, or a cancel. */
function openStreams(wire: ScriptedTransport, ended: readonly string[] = []): string[] {
  const opened = wire.log.filter((l) => l.startsWith('stream ')).map((l) => l.slice('stream '.length));
  const cancelled = new Set(
    wire.log.filter((l) => l.startsWith('cancel ')).map((l) => l.slice('cancel '.length)),
  );
  return opened.filter((id) => !cancelled.has(id) && !ended.includes(id));
}

describe('TritonLlm.stream()', () => {
  it('refuses bad input at the call, before the model config is read or anything is sent', () => {
    const { llm, wire } = client({ steps: [text('a', { final: true })] });
    let error: unknown;
    try {
      llm.stream({ prompt: 'Hi', maxTokens: 0 });
    } catch (err) {
      error = err;
    }

    expect(error).toBeInstanceOf(TritonLlmError);
    expect((error as TritonLlmError).code).toBe('invalid_argument');
    expect((error as TritonLlmError).message).toContain('maxTokens');
    expect(wire.log).toEqual([]);
  });

  it('echoes a caller-chosen request id on the wire and on every chunk', async () => {
    const { llm, wire } = client({ steps: [text('a'), text('b', { final: true })] });
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8, requestId: '4242' });
    const ids = new Set<string>();
    for await (const chunk of stream) ids.add(chunk.requestId);

    expect(stream.requestId).toBe('4242');
    expect([...ids]).toEqual(['4242']);
    expect(wire.log).toEqual(['stream 4242']);
  });

  it('stop() before the first chunk ends the stream with no text and finish reason stopped', async () => {
    const { llm, wire } = client({ steps: [text('a'), 'silence'] });
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 });
    await stream.stop();
    const chunks: StreamChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks.map((c) => c.text)).toEqual(['']);
    const final = chunks[0]!;
    expect(final.done && final.finishReason).toBe('stopped');
    expect(openStreams(wire)).toEqual([]);
  });

  it('leaving before the first chunk leaves no request open', async () => {
    const { llm, wire } = client({ steps: [text('a'), 'silence'] });
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 });
    await stream[Symbol.asyncIterator]().return?.();

    expect(openStreams(wire)).toEqual([]);
  });

  it('a second for-await over a finished stream yields nothing and sends nothing', async () => {
    const { llm, wire } = client({ steps: [text('a'), text('b', { final: true })] });
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 });
    const first: string[] = [];
    for await (const chunk of stream) first.push(chunk.text);
    const again: StreamChunk[] = [];
    for await (const chunk of stream) again.push(chunk);

    expect(first).toEqual(['a', 'b', '']);
    expect(again).toEqual([]);
    expect(wire.calls).toBe(1);
  });

  it('a second for-await after a break yields nothing, and the request stays cancelled', async () => {
    const { llm, wire } = client({ steps: [text('a'), 'silence'] });
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 });
    for await (const _ of stream) break;
    const again: StreamChunk[] = [];
    for await (const chunk of stream) again.push(chunk);

    expect(again).toEqual([]);
    expect(wire.calls).toBe(1);
    expect(openStreams(wire)).toEqual([]);
  });
});

// Both once failed: the stream asked its generation for an iterator a second time, which the
// generation refuses ("a generation can be iterated only once").
describe('the async iteration protocol of a stream', () => {
  it('next() after return() before the first chunk reports the end instead of failing', async () => {
    const { llm } = client({ steps: [text('a'), 'silence'] });
    const iterator = llm.stream({ prompt: 'Hi', maxTokens: 8 })[Symbol.asyncIterator]();
    await iterator.return?.();

    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it('next() called twice at once hands out the first two chunks in order', async () => {
    const { llm } = client({ steps: [text('a'), text('b'), text('c', { final: true })] });
    const iterator = llm.stream({ prompt: 'Hi', maxTokens: 8 })[Symbol.asyncIterator]();
    const [one, two] = await Promise.all([iterator.next(), iterator.next()]);

    expect([one.value?.text, two.value?.text]).toEqual(['a', 'b']);
  });
});
