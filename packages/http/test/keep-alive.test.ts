import { httpTransport } from '@trtllm/http';
import { tensorStrings } from '@trtllm/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { drain, ensembleRequest } from './helpers.js';
import { type Received, startScriptedServer } from './scripted-server.js';

// The Node entry point carries streams on keep-alive sockets of its own: these tests watch the
// connections a real server sees.
const event = (text: string) =>
  `data: ${JSON.stringify({ model_name: 'm', id: 'r', text_output: text })}\n\n`;

// Requests to model 'race' on a reused connection lose it before any byte of the answer, once.
const raced = new Set<number>();
let server: Awaited<ReturnType<typeof startScriptedServer>>;
beforeAll(async () => {
  server = await startScriptedServer((req: Received, res) => {
    const model = /\/models\/([^/]+)\//.exec(req.url)?.[1];
    if (model === 'race' && req.connection > 0 && !raced.has(req.connection)) {
      const earlier = server.received.filter((r) => r.connection === req.connection).length;
      if (earlier > 1) {
        raced.add(req.connection);
        res.socket?.destroy();
        return;
      }
    }
    if (model === 'endless') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(event('A'));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(event('A'));
    res.end(event('B'));
  });
});
afterAll(() => server.close());

const texts = (responses: Awaited<ReturnType<typeof drain>>['responses']) =>
  responses.flatMap((r) => r.outputs.flatMap((t) => tensorStrings(t)));
const request = (model: string, id: string) => ({ ...ensembleRequest(id, 'hi', 2, true), model });

describe('streams on keep-alive connections (Node)', () => {
  it('sends one stream after another on the same connection', async () => {
    const transport = httpTransport({ baseUrl: server.url });
    const before = server.connections();
    for (const id of ['k-1', 'k-2', 'k-3']) {
      const { responses, error } = await drain(transport.stream(request('m', id)));
      expect(error).toBeUndefined();
      expect(texts(responses)).toEqual(['A', 'B']);
    }
    expect(server.connections() - before).toBe(1);
    const ids = server.received.slice(-3).map((r) => JSON.parse(r.body.toString()).id);
    expect(ids).toEqual(['k-1', 'k-2', 'k-3']);
    await transport.close();
  });

  it('opens one connection per concurrent stream', async () => {
    const transport = httpTransport({ baseUrl: server.url });
    const before = server.connections();
    const results = await Promise.all(
      ['c-1', 'c-2', 'c-3'].map((id) => drain(transport.stream(request('m', id)))),
    );
    expect(results.map((r) => texts(r.responses))).toEqual([
      ['A', 'B'],
      ['A', 'B'],
      ['A', 'B'],
    ]);
    expect(server.connections() - before).toBe(3);
    await transport.close();
  });

  it('never reuses the connection of a stream left early: the server sees it close', async () => {
    const transport = httpTransport({ baseUrl: server.url });
    const before = server.connections();
    for await (const response of transport.stream(request('endless', 'e-1'))) {
      expect(response.final).toBe(false);
      break;
    }
    await vi.waitFor(() => expect(server.closedEarly).toContain('/v2/models/endless/generate_stream'));
    const { error } = await drain(transport.stream(request('m', 'e-2')));
    expect(error).toBeUndefined();
    expect(server.connections() - before).toBe(2);
    await transport.close();
  });

  it('sends the request again on a new connection when a reused one closes before answering', async () => {
    const transport = httpTransport({ baseUrl: server.url });
    await drain(transport.stream(request('race', 'r-1')));
    const { responses, error } = await drain(transport.stream(request('race', 'r-2')));
    expect(error).toBeUndefined();
    expect(texts(responses)).toEqual(['A', 'B']);
    const tries = server.received.filter((r) => JSON.parse(r.body.toString()).id === 'r-2');
    expect(tries).toHaveLength(2);
    expect(tries[0]?.connection).not.toBe(tries[1]?.connection);
    await transport.close();
  });

  it('a caller-given fetch carries the streams instead of the sockets', async () => {
    const seen: string[] = [];
    const transport = httpTransport({
      baseUrl: server.url,
      fetch: (input, init) => {
        seen.push(input);
        return fetch(input, init);
      },
    });
    const { responses } = await drain(transport.stream(request('m', 'f-1')));
    expect(texts(responses)).toEqual(['A', 'B']);
    expect(seen).toEqual([`${server.url}/v2/models/m/generate_stream`]);
    await transport.close();
  });
});
