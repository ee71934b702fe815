import { httpTransport } from '@trtllm/http';
import { createTensor, type InferResponse, tensorNumbers, tensorStrings } from '@trtllm/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { drain, ensembleRequest } from './helpers.js';
import { sendJson, startScriptedServer } from './scripted-server.js';

const event = (text: string) =>
  `data: ${JSON.stringify({ model_name: 'ensemble', model_version: '1', id: 'r', text_output: text })}\n\n`;

// The model name in the path picks the script.
const scripts: Record<string, (write: (s: string) => boolean, end: () => void, destroy: () => void) => void> =
  {
    // Byte by byte, CRLF line ends, a comment line: framing must not matter.
    split: (write, end) => {
      const text = `: keep-alive\r\n${event('A').replaceAll('\n', '\r\n')}${event('B')}${event('C')}`;
      for (const ch of text) write(ch);
      end();
    },
    midEvent: (write, end) => {
      write(event('A'));
      write('data: {"text_output":"B"');
      end();
    },
    cut: (write, _end, destroy) => {
      write(event('A'));
      write(event('B'));
      setImmediate(destroy);
    },
    malformed: (write, end) => {
      write(event('A'));
      write('data: {"text_output": nope}\n\n');
      end();
    },
    errorEvent: (write, end) => {
      write(event('A'));
      write(event('B'));
      write(`data: ${JSON.stringify({ error: 'boom mid-stream' })}\n\n`);
      end();
    },
    typed: (write, end) => {
      write(
        `data: ${JSON.stringify({
          model_name: 'typed',
          model_version: '3',
          id: 'r',
          text_output: 'hé',
          cum_log_probs: -0.5,
          output_log_probs: [-1, -2],
          flag: true,
          grid: [
            [1, 2],
            [3, 4],
          ],
        })}\n\n`,
      );
      end();
    },
    // Text that is not ASCII, raw (as JSON.stringify writes it) and as \u escapes.
    unicode: (write, end) => {
      write(
        `data: ${JSON.stringify({
          model_name: 'modèle',
          model_version: '1',
          id: 'ré',
          parameters: { note: 'ça', n: 2 },
          text_output: '日本🙂',
          sortie_é: 'é',
        })}\n\n`,
      );
      write('data: {"model_name":"mod\\u00e8le","id":"r\\u00e9","text_output":"\\u65e5\\ud83d\\ude42é"}\n\n');
      end();
    },
    endless: (write) => {
      write(event('A'));
    },
  };

// Answers that are not an event stream, by model name.
const plain: Record<string, { type: string; body: string; quoted: string }> = {
  json: { type: 'application/json', body: JSON.stringify({ text_output: 'A' }), quoted: 'text_output' },
  html: { type: 'text/html', body: '<html><body>Sign in to continue</body></html>', quoted: 'Sign in' },
};

let server: Awaited<ReturnType<typeof startScriptedServer>>;
beforeAll(async () => {
  server = await startScriptedServer((req, res) => {
    const name = /\/models\/([^/]+)\//.exec(req.url)?.[1] ?? '';
    const answer = plain[name];
    if (answer !== undefined) {
      res.writeHead(200, { 'content-type': answer.type });
      res.end(answer.body);
      return;
    }
    const script = scripts[name];
    if (script === undefined) return sendJson(res, 404, { error: `unknown model ${name}` });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    script(
      (s) => res.write(s),
      () => res.end(),
      () => res.socket?.destroy(),
    );
  });
});
afterAll(() => server.close());

// On Node streams go over the package's own sockets; a caller's fetch takes the fetch path that
// browsers use. Both must read the same answers the same way.
const engines = [
  ['Node sockets', {}],
  ['fetch', { fetch: (input: string, init: RequestInit) => fetch(input, init) }],
] as const;

describe.each(engines)('SSE framing of /generate_stream over %s', (_name, engine) => {
  const stream = (model: string) =>
    httpTransport({ baseUrl: server.url, ...engine }).stream({
      ...ensembleRequest('r', 'hi', 3, true),
      model,
    });

  it('yields every event whatever the chunking, then exactly one final response', async () => {
    const { responses, error } = await drain(stream('split'));
    expect(error).toBeUndefined();
    const texts = responses.flatMap((r) => r.outputs.flatMap((t) => tensorStrings(t)));
    expect(texts).toEqual(['A', 'B', 'C']);
    expect(responses.map((r) => r.final)).toEqual([false, false, false, true]);
    expect(responses.at(-1)?.outputs).toEqual([]);
  });

  it('types outputs by their JSON: strings BYTES, numbers FP64, booleans BOOL', async () => {
    const { responses } = await drain(stream('typed'));
    const first = responses[0];
    expect(first?.model).toBe('typed');
    expect(first?.modelVersion).toBe('3');
    const byName = new Map(first?.outputs.map((t) => [t.name, t]));
    expect(byName.get('text_output')).toMatchObject({ datatype: 'BYTES', shape: [] });
    expect(tensorStrings(byName.get('text_output')!)).toEqual(['hé']);
    expect(byName.get('cum_log_probs')).toMatchObject({ datatype: 'FP64', shape: [] });
    expect(byName.get('output_log_probs')).toMatchObject({ datatype: 'FP64', shape: [2] });
    expect(tensorNumbers(byName.get('output_log_probs')!)).toEqual([-1, -2]);
    expect(byName.get('flag')).toMatchObject({ datatype: 'BOOL', shape: [], data: [true] });
    expect(byName.get('grid')).toMatchObject({ datatype: 'FP64', shape: [2, 2] });
  });

  it.each([
    ['every output', undefined],
    ['the outputs asked for', ['text_output', 'sortie_é']],
  ])('reads text that is not ASCII, raw or escaped, with %s', async (_what, outputs) => {
    const { responses, error } = await drain(
      httpTransport({ baseUrl: server.url, ...engine }).stream({
        ...ensembleRequest('r', 'hi', 3, true),
        model: 'unicode',
        ...(outputs !== undefined ? { outputs } : {}),
      }),
    );
    expect(error).toBeUndefined();
    const [raw, escaped] = responses;
    const text = (r: InferResponse | undefined, name: string) =>
      tensorStrings(r?.outputs.find((t) => t.name === name) ?? createTensor(name, 'BYTES', [0], []));
    expect(raw).toMatchObject({ model: 'modèle', id: 'ré', parameters: { note: 'ça', n: 2 } });
    expect(text(raw, 'text_output')).toEqual(['日本🙂']);
    expect(text(raw, 'sortie_é')).toEqual(['é']);
    expect(escaped).toMatchObject({ model: 'modèle', id: 'ré' });
    expect(text(escaped, 'text_output')).toEqual(['日🙂é']);
  });

  it('fails with protocol when the body ends inside an event, after the complete ones', async () => {
    const { responses, error } = await drain(stream('midEvent'));
    expect(responses.map((r) => r.final)).toEqual([false]);
    expect(error?.code).toBe('protocol');
  });

  it('fails with unavailable when the connection breaks mid-body, never a short answer', async () => {
    const { responses, error } = await drain(stream('cut'));
    expect(responses.every((r) => !r.final)).toBe(true);
    expect(responses.length).toBeLessThanOrEqual(2);
    expect(error?.code).toBe('unavailable');
  });

  it('fails with protocol on an event that is not JSON, after the events before it', async () => {
    const { responses, error } = await drain(stream('malformed'));
    expect(responses.map((r) => r.final)).toEqual([false]);
    expect(error?.code).toBe('protocol');
    expect(error?.requestId).toBe('r');
  });

  it('throws an error event with its message verbatim, after the events before it', async () => {
    const { responses, error } = await drain(stream('errorEvent'));
    expect(responses.flatMap((r) => r.outputs.flatMap((t) => tensorStrings(t)))).toEqual(['A', 'B']);
    expect(error?.code).toBe('internal');
    expect(error?.serverMessage).toBe('boom mid-stream');
    expect(error?.httpStatus).toBe(200);
  });

  it('closes the connection when the consumer breaks out of the loop', async () => {
    for await (const response of stream('endless')) {
      expect(response.final).toBe(false);
      break;
    }
    await vi.waitFor(() => expect(server.closedEarly).toContain('/v2/models/endless/generate_stream'));
  });

  it.each(Object.entries(plain))(
    'fails with protocol on a 2xx answer that is %s, quoting it',
    async (name, answer) => {
      const { responses, error } = await drain(stream(name));
      expect(responses).toEqual([]);
      expect(error?.code).toBe('protocol');
      expect(error?.message).toContain(answer.type);
      expect(error?.message).toContain(answer.quoted);
    },
  );

  it('maps a refusal before the stream starts to an error on the first pull', async () => {
    const { responses, error } = await drain(stream('nope'));
    expect(responses).toEqual([]);
    expect(error?.code).toBe('not_found');
    expect(error?.serverMessage).toBe('unknown model nope');
  });
});
