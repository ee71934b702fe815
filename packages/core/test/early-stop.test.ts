/**
 * Ending a request early (abort, break, stop(), a stop string), as the transport sees it: a cancel
 * of the call, the in-band stop for the same request id, or nothing; and what the result says.
 * The expected means follow the README's early-stop table.
 */
import { describe, expect, it } from 'vitest';
import { type FinalChunk, type StreamChunk, TritonLlm, TritonLlmError } from '../src/index.js';
import {
  charTokenizer,
  emptyFinal,
  ensemble,
  ids,
  idsOf,
  rawModel,
  type Script,
  type ScriptedOptions,
  ScriptedTransport,
  text,
} from './scripted-transport.js';

interface Setup {
  readonly wire: ScriptedTransport;
  readonly llm: TritonLlm;
  readonly warnings: string[];
}

function ensembleClient(script: Script, options: ScriptedOptions = {}): Setup {
  const wire = new ScriptedTransport(ensemble(), [script], options);
  const warnings: string[] = [];
  const llm = new TritonLlm({
    transport: wire,
    model: 'ensemble',
    logger: { warn: (m) => warnings.push(m) },
  });
  return { wire, llm, warnings };
}

function rawClient(script: Script, options: ScriptedOptions = {}): Setup {
  const wire = new ScriptedTransport(rawModel(), [script], options);
  const warnings: string[] = [];
  const llm = new TritonLlm({
    transport: wire,
    model: 'tensorrt_llm',
    tokenizer: charTokenizer,
    logger: { warn: (m) => warnings.push(m) },
  });
  return { wire, llm, warnings };
}

/** Reads a stream to its end, calling `after` once the first delta arrived. */
async function readAll(
  stream: AsyncIterable<StreamChunk>,
  after?: () => unknown,
): Promise<{ text: string; final: FinalChunk | undefined }> {
  let text = '';
  let final: FinalChunk | undefined;
  let first = true;
  for await (const chunk of stream) {
    if (chunk.done) final = chunk;
    else text += chunk.text;
    if (!chunk.done && first) {
      first = false;
      await after?.();
    }
  }
  return { text, final };
}

const silentAfter = (...first: Script['steps']): Script => ({ steps: [...first, 'silence'] });

describe('an AbortSignal', () => {
  it('cancels an ensemble call: the chunks stay, the final chunk says cancelled and that the server goes on', async () => {
    const { wire, llm, warnings } = ensembleClient(silentAfter(text('a')));
    const abort = new AbortController();
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 }, { signal: abort.signal });
    const { text: got, final } = await readAll(stream, () => abort.abort());

    expect(got).toBe('a');
    expect(final?.finishReason).toBe('cancelled');
    expect(final?.result.text).toBe('a');
    expect(final?.result.earlyStop).toEqual({
      trigger: 'abort',
      via: ['grpc_cancel'],
      serverTold: true,
      serverStopsGenerating: false,
    });
    expect(wire.log).toEqual([`stream ${stream.requestId}`, `cancel ${stream.requestId}`]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("'ensemble'");
  });

  it('over HTTP, is a disconnect', async () => {
    const { llm } = ensembleClient(silentAfter(text('a')), { protocol: 'http' });
    const abort = new AbortController();
    const { final } = await readAll(
      llm.stream({ prompt: 'Hi', maxTokens: 8 }, { signal: abort.signal }),
      () => abort.abort(),
    );

    expect(final?.result.earlyStop?.via).toEqual(['http_disconnect']);
  });

  it('cancels a raw-model gRPC call, which stops the model: no in-band stop, no warning', async () => {
    const { wire, llm, warnings } = rawClient(silentAfter(ids([idsOf('a')])));
    const abort = new AbortController();
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 }, { signal: abort.signal });
    const { text: got, final } = await readAll(stream, () => abort.abort());

    expect(got).toBe('a');
    expect(final?.finishReason).toBe('cancelled');
    expect(final?.result.earlyStop).toEqual({
      trigger: 'abort',
      via: ['grpc_cancel'],
      serverTold: true,
      serverStopsGenerating: true,
    });
    expect(wire.log).toEqual([`stream ${stream.requestId}`, `cancel ${stream.requestId}`]);
    expect(warnings).toEqual([]);
  });

  it('on the raw model over HTTP sends the in-band stop for the same request id, then disconnects', async () => {
    const { wire, llm } = rawClient(silentAfter(ids([idsOf('a')])), { protocol: 'http' });
    const abort = new AbortController();
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 }, { signal: abort.signal });
    const { final } = await readAll(stream, () => abort.abort());

    expect(final?.finishReason).toBe('cancelled');
    expect(final?.result.earlyStop?.via).toEqual(['in_band_stop', 'http_disconnect']);
    expect(wire.log).toEqual([
      `stream ${stream.requestId}`,
      `stop ${stream.requestId}`,
      `cancel ${stream.requestId}`,
    ]);
  });

  it('on a call shared with other requests: the raw model gets the in-band stop, the ensemble nothing', async () => {
    const raw = rawClient(silentAfter(ids([idsOf('a')])), { sharedCall: true });
    const rawAbort = new AbortController();
    const rawStream = raw.llm.stream({ prompt: 'Hi', maxTokens: 8 }, { signal: rawAbort.signal });
    const rawEnd = await readAll(rawStream, () => rawAbort.abort());
    expect(rawEnd.final?.result.earlyStop).toEqual({
      trigger: 'abort',
      via: ['in_band_stop', 'none'],
      serverTold: true,
      serverStopsGenerating: true,
    });
    expect(raw.wire.log).toContain(`stop ${rawStream.requestId}`);

    const shared = ensembleClient(silentAfter(text('a')), { sharedCall: true });
    const abort = new AbortController();
    const stream = shared.llm.stream({ prompt: 'Hi', maxTokens: 8 }, { signal: abort.signal });
    const end = await readAll(stream, () => abort.abort());
    expect(end.final?.result.earlyStop).toEqual({
      trigger: 'abort',
      via: ['none'],
      serverTold: false,
      serverStopsGenerating: false,
    });
    expect(shared.wire.log.some((l) => l.startsWith('stop '))).toBe(false);
  });

  it('already aborted: cancelled before anything is sent', async () => {
    const { wire, llm } = ensembleClient(silentAfter(text('a')));
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 }, { signal: AbortSignal.abort() });
    const error = await readAll(stream).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(TritonLlmError);
    expect((error as TritonLlmError).code).toBe('cancelled');
    expect(wire.log).toEqual([]);
  });
});

describe('leaving for-await early', () => {
  it('cancels an ensemble call, sends no stop, and warns once that the server keeps generating', async () => {
    const { wire, llm, warnings } = ensembleClient(silentAfter(text('a')));
    wire.add(silentAfter(text('a')));
    const requestIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 });
      requestIds.push(stream.requestId);
      for await (const chunk of stream) {
        expect(chunk.text).toBe('a');
        break;
      }
    }

    expect(wire.log).toEqual(requestIds.flatMap((id) => [`stream ${id}`, `cancel ${id}`]));
    expect(warnings).toHaveLength(1);
  });

  it('on the raw model over HTTP sends the in-band stop, then disconnects', async () => {
    const { wire, llm } = rawClient(silentAfter(ids([idsOf('a')])), { protocol: 'http' });
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 });
    for await (const _ of stream) break;

    expect(wire.log).toEqual([
      `stream ${stream.requestId}`,
      `stop ${stream.requestId}`,
      `cancel ${stream.requestId}`,
    ]);
  });

  it('after the final chunk tells the server nothing', async () => {
    const { wire, llm, warnings } = ensembleClient({ steps: [text('a', { final: true })] });
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 });
    for await (const chunk of stream) if (chunk.done) break;

    expect(wire.log).toEqual([`stream ${stream.requestId}`]);
    expect(warnings).toEqual([]);
  });
});

describe('stop()', () => {
  it('sends the raw model the in-band stop for the same id; its final response ends the stream as stopped', async () => {
    const { wire, llm, warnings } = rawClient({
      steps: [ids([idsOf('a')]), 'silence'],
      onStop: [emptyFinal],
    });
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 });
    const { text: got, final } = await readAll(stream, () => stream.stop());

    expect(got).toBe('a');
    expect(final?.finishReason).toBe('stopped');
    expect(final?.result.earlyStop).toEqual({
      trigger: 'stop',
      via: ['in_band_stop'],
      serverTold: true,
      serverStopsGenerating: true,
    });
    expect(wire.log).toEqual([`stream ${stream.requestId}`, `stop ${stream.requestId}`]);
    expect(warnings).toEqual([]);
  });

  it('cancels an ensemble call (it has no stop input): stopped, and the server keeps generating', async () => {
    const { wire, llm, warnings } = ensembleClient(silentAfter(text('a')));
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 });
    const { final } = await readAll(stream, () => stream.stop());

    expect(final?.finishReason).toBe('stopped');
    expect(final?.result.earlyStop).toEqual({
      trigger: 'stop',
      via: ['grpc_cancel'],
      serverTold: true,
      serverStopsGenerating: false,
    });
    expect(wire.log).toEqual([`stream ${stream.requestId}`, `cancel ${stream.requestId}`]);
    expect(warnings).toHaveLength(1);
  });

  it('cancels the call when the in-band stop cannot be sent, and says so', async () => {
    const { wire, llm } = rawClient({
      steps: [ids([idsOf('a')]), 'silence'],
      stopFails: new TritonLlmError('unavailable', 'connection reset'),
    });
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8 });
    const { final } = await readAll(stream, () => stream.stop());

    expect(final?.finishReason).toBe('stopped');
    expect(final?.result.earlyStop?.via).toEqual(['grpc_cancel']);
    expect(wire.log).toEqual([
      `stream ${stream.requestId}`,
      `stop ${stream.requestId}`,
      `cancel ${stream.requestId}`,
    ]);
  });
});

describe('a stop string', () => {
  it("split over responses is never shown; the ensemble's own final ends the call: no cancel, no report", async () => {
    const { wire, llm, warnings } = ensembleClient({
      steps: [text('ab'), text('cE'), text('ND'), emptyFinal],
    });
    const chunks: StreamChunk[] = [];
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8, stopWords: ['END'] });
    for await (const chunk of stream) chunks.push(chunk);

    const shown = chunks.filter((c) => !c.done).map((c) => c.text);
    expect(shown.join('')).toBe('abc');
    expect(shown.some((t) => /[END]/.test(t))).toBe(false);
    const final = chunks.at(-1) as FinalChunk;
    expect(final.finishReason).toBe('stop');
    expect(final.result.earlyStop).toBeUndefined();
    expect(wire.log).toEqual([`stream ${stream.requestId}`]);
    expect(warnings).toEqual([]);
  });

  it('followed by more output (a match the server did not make) cancels the ensemble call', async () => {
    const { wire, llm, warnings } = ensembleClient(silentAfter(text('ab'), text('END'), text(' more')));
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8, stopWords: ['END'] });
    const { text: got, final } = await readAll(stream);

    expect(got).toBe('ab');
    expect(final?.finishReason).toBe('stop');
    expect(final?.result.earlyStop).toEqual({
      trigger: 'stop_sequence',
      via: ['grpc_cancel'],
      serverTold: true,
      serverStopsGenerating: false,
    });
    expect(wire.log).toEqual([`stream ${stream.requestId}`, `cancel ${stream.requestId}`]);
    expect(warnings).toHaveLength(1);
  });

  it('the raw model missed over gRPC ends it with the in-band stop; its final response closes the stream', async () => {
    const { wire, llm } = rawClient({
      steps: [ids([idsOf('a')]), ids([idsOf('x')]), ids([idsOf('b')]), 'silence'],
      onStop: [emptyFinal],
    });
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8, stopWords: ['x'] });
    const { text: got, final } = await readAll(stream);

    expect(wire.requests[0]?.inputs.some((t) => t.name === 'stop_words_list')).toBe(true);
    expect(got).toBe('a');
    expect(final?.finishReason).toBe('stop');
    expect(final?.result.earlyStop).toEqual({
      trigger: 'stop_sequence',
      via: ['in_band_stop'],
      serverTold: true,
      serverStopsGenerating: true,
    });
    expect(wire.log).toEqual([`stream ${stream.requestId}`, `stop ${stream.requestId}`]);
  });

  it('on the raw model over HTTP (not sent: no word-list tensor there) is matched by the client and stopped in-band', async () => {
    const { wire, llm } = rawClient(
      { steps: [ids([idsOf('a')]), ids([idsOf('x')]), 'silence'], onStop: [emptyFinal] },
      { protocol: 'http' },
    );
    const stream = llm.stream({ prompt: 'Hi', maxTokens: 8, stopWords: ['x'] });
    const { text: got, final } = await readAll(stream);

    expect(wire.requests[0]?.inputs.some((t) => t.name === 'stop_words_list')).toBe(false);
    expect(got).toBe('a');
    expect(final?.result.earlyStop?.via).toEqual(['in_band_stop']);
    expect(wire.log).toEqual([`stream ${stream.requestId}`, `stop ${stream.requestId}`]);
  });

  it('in text that came whole is trimmed without ending anything', async () => {
    const wire = new ScriptedTransport(ensemble({ decoupled: false }), [
      { steps: [text('hello END world', { final: true })] },
    ]);
    const llm = new TritonLlm({ transport: wire, model: 'ensemble', logger: { warn: () => {} } });
    const result = await llm.generate({ prompt: 'Hi', maxTokens: 8, stopWords: ['END'] });

    expect(result.text).toBe('hello ');
    expect(result.finishReason).toBe('stop');
    expect(result.earlyStop).toBeUndefined();
    expect(wire.log).toEqual([`infer ${result.requestId}`]);
  });
});
