/**
 * The generation state machine, driven through `TritonLlm` over a transport that replays chosen
 * server answers: which chunks come out, in which order, and what ends a stream.
 */
import { describe, expect, it } from 'vitest';
import { type GenerationEvent, type StreamChunk, TritonLlm, TritonLlmError } from '../src/index.js';
import {
  bls,
  blsFlagsOnlyFinal,
  emptyFinal,
  ensemble,
  fail,
  type Script,
  ScriptedTransport,
  text,
} from './scripted-transport.js';

function client(transport: ScriptedTransport, events?: GenerationEvent[]): TritonLlm {
  return new TritonLlm({
    transport,
    model: 'ensemble',
    logger: { warn: () => {} },
    retry: { initialDelayMs: 0, maxDelayMs: 0 },
    ...(events !== undefined ? { onEvent: (e: GenerationEvent) => events.push(e) } : {}),
  });
}

/** Reads a stream to its end; `error` is what its iteration threw, if anything. */
async function read(
  stream: AsyncIterable<StreamChunk>,
): Promise<{ chunks: StreamChunk[]; error?: TritonLlmError }> {
  const chunks: StreamChunk[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (err) {
    if (!(err instanceof TritonLlmError)) throw err;
    return { chunks, error: err };
  }
  return { chunks };
}

const deltas = (chunks: readonly StreamChunk[]): string[] => chunks.filter((c) => !c.done).map((c) => c.text);

describe('a stream', () => {
  const transport = (config = ensemble(), ...scripts: Script[]) => new ScriptedTransport(config, scripts);

  it('yields one delta per response in order, then one final chunk with the whole text', async () => {
    const wire = transport(ensemble(), { steps: [text('The'), text(' cat'), text(' sat', { final: true })] });
    const stream = client(wire).stream({ prompt: 'Hi', maxTokens: 8 });
    const { chunks, error } = await read(stream);

    expect(error).toBeUndefined();
    expect(deltas(chunks)).toEqual(['The', ' cat', ' sat']);
    expect(chunks.filter((c) => c.done)).toHaveLength(1);
    const last = chunks.at(-1)!;
    expect(last.done).toBe(true);
    expect(last.text).toBe('');
    if (!last.done) return;
    expect(last.result.text).toBe('The cat sat');
    expect(chunks.every((c) => c.requestId === stream.requestId)).toBe(true);
    expect(last.result.requestId).toBe(stream.requestId);
    // One streamed ensemble response is one token.
    expect(chunks.filter((c) => !c.done).map((c) => c.totalTokens)).toEqual([1, 2, 3]);
    expect(wire.log).toEqual([`stream ${stream.requestId}`]);
  });

  it('an empty final response adds no chunk and ends the stream', async () => {
    const wire = transport(ensemble(), { steps: [text('a'), text('b'), emptyFinal] });
    const { chunks } = await read(client(wire).stream({ prompt: 'Hi', maxTokens: 8 }));

    expect(deltas(chunks)).toEqual(['a', 'b']);
    const last = chunks.at(-1)!;
    expect(last.done && last.result.sequences.map((s) => [s.text, s.tokenCount])).toEqual([['ab', 2]]);
  });

  it('a BLS flags-only final (one empty text) adds no chunk and no token', async () => {
    const wire = transport(bls({ accumulate: false }), { steps: [text('a'), text('b'), blsFlagsOnlyFinal] });
    const { chunks } = await read(client(wire).stream({ prompt: 'Hi', maxTokens: 8 }));

    expect(deltas(chunks)).toEqual(['a', 'b']);
    const last = chunks.at(-1)!;
    expect(last.done && last.result.sequences.map((s) => [s.text, s.tokenCount])).toEqual([['ab', 2]]);
  });

  it('turns accumulated BLS text into deltas, holding an incomplete character back', async () => {
    const wire = transport(bls({ accumulate: true }), {
      steps: [text('caf'), text('caf\uFFFD'), text('café'), text('café au lait', { final: true })],
    });
    const { chunks } = await read(client(wire).stream({ prompt: 'Hi', maxTokens: 8 }));

    expect(deltas(chunks)).toEqual(['caf', 'é', ' au lait']);
    expect(chunks.some((c) => !c.done && c.lossy)).toBe(false);
  });

  it('a server error after two responses: both chunks stay delivered, then a typed error; no retry', async () => {
    const wire = transport(ensemble(), {
      steps: [text('a'), text('b'), fail(new TritonLlmError('internal', 'the model failed'))],
    });
    const stream = client(wire).stream({ prompt: 'Hi', maxTokens: 8 });
    const { chunks, error } = await read(stream);

    expect(deltas(chunks)).toEqual(['a', 'b']);
    expect(chunks.some((c) => c.done)).toBe(false);
    expect(error?.code).toBe('internal');
    expect(error?.message).toContain('the model failed');
    expect(error?.requestId).toBe(stream.requestId);
    expect(error?.model).toBe('ensemble');
    expect(wire.calls).toBe(1);
  });

  it('a lost connection before the first response is retried, and only the retry speaks', async () => {
    const events: GenerationEvent[] = [];
    const wire = transport(
      ensemble(),
      { steps: [fail(new TritonLlmError('unavailable', 'connection refused'))] },
      { steps: [text('ok', { final: true })] },
    );
    const stream = client(wire, events).stream({ prompt: 'Hi', maxTokens: 8 });
    const { chunks, error } = await read(stream);

    expect(error).toBeUndefined();
    expect(deltas(chunks)).toEqual(['ok']);
    expect(wire.log).toEqual([`stream ${stream.requestId}`, `stream ${stream.requestId}`]);
    expect(events.filter((e) => e.type === 'retry').map((e) => e.type === 'retry' && e.attempt)).toEqual([2]);
  });

  it('a lost connection after a response is not retried: the chunk stays, the error follows', async () => {
    const wire = transport(
      ensemble(),
      { steps: [text('a'), fail(new TritonLlmError('unavailable', 'connection reset'))] },
      { steps: [text('never', { final: true })] },
    );
    const { chunks, error } = await read(client(wire).stream({ prompt: 'Hi', maxTokens: 8 }));

    expect(deltas(chunks)).toEqual(['a']);
    expect(error?.code).toBe('unavailable');
    expect(wire.calls).toBe(1);
  });

  it('a failure that is not a TritonLlmError reaches the caller as one, keeping the original as cause', async () => {
    const original = new RangeError('a transport bug');
    const wire = transport(ensemble(), { steps: [text('a'), fail(original)] });
    const { chunks, error } = await read(client(wire).stream({ prompt: 'Hi', maxTokens: 8 }));

    expect(deltas(chunks)).toEqual(['a']);
    expect(error).toBeInstanceOf(TritonLlmError);
    expect(error?.cause).toBe(original);
  });

  it('reports request, one response per answer and end to onEvent, in order', async () => {
    const events: GenerationEvent[] = [];
    const wire = transport(ensemble(), { steps: [text('a'), text('b'), emptyFinal] });
    const stream = client(wire, events).stream({ prompt: 'Hi', maxTokens: 8 });
    await read(stream);

    expect(events.map((e) => e.type)).toEqual(['request', 'response', 'response', 'response', 'end']);
    expect(events.every((e) => e.requestId === stream.requestId)).toBe(true);
    const end = events.at(-1)!;
    expect(end.type === 'end' && end.result.text).toBe('ab');
  });

  it('reports error, not end, when the request fails', async () => {
    const events: GenerationEvent[] = [];
    const wire = transport(ensemble(), {
      steps: [text('a'), fail(new TritonLlmError('internal', 'the model failed'))],
    });
    await read(client(wire, events).stream({ prompt: 'Hi', maxTokens: 8 }));

    expect(events.map((e) => e.type)).toEqual(['request', 'response', 'error']);
    const last = events.at(-1)!;
    expect(last.type === 'error' && last.error.code).toBe('internal');
  });
});

describe('the idle timeout', () => {
  it('ends a silent stream with deadline_exceeded after the chunks that came, and cancels the call', async () => {
    const wire = new ScriptedTransport(ensemble(), [{ steps: [text('a'), 'silence'] }]);
    const stream = client(wire).stream({ prompt: 'Hi', maxTokens: 8 }, { idleTimeoutMs: 30 });
    const { chunks, error } = await read(stream);

    expect(deltas(chunks)).toEqual(['a']);
    expect(error?.code).toBe('deadline_exceeded');
    expect(error?.requestId).toBe(stream.requestId);
    expect(error?.earlyStop?.trigger).toBe('idle_timeout');
    expect(error?.earlyStop?.via).toEqual(['grpc_cancel']);
    // Cancelling an ensemble does not stop its inner request.
    expect(error?.earlyStop?.serverStopsGenerating).toBe(false);
    expect(wire.log).toEqual([`stream ${stream.requestId}`, `cancel ${stream.requestId}`]);
  });

  it('is not reached while responses keep coming', async () => {
    const wire = new ScriptedTransport(ensemble(), [
      { steps: [text('a'), text('b'), text('c', { final: true })] },
    ]);
    const { chunks, error } = await read(
      client(wire).stream({ prompt: 'Hi', maxTokens: 8 }, { idleTimeoutMs: 10_000 }),
    );

    expect(error).toBeUndefined();
    expect(deltas(chunks)).toEqual(['a', 'b', 'c']);
  });
});
