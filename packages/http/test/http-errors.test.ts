import { httpTransport } from '@trtllm/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensembleRequest, rejection } from './helpers.js';
import { sendJson, startScriptedServer } from './scripted-server.js';

// Each request names the answer it wants in its path: /v2/models/s{status}/generate.
let server: Awaited<ReturnType<typeof startScriptedServer>>;
beforeAll(async () => {
  server = await startScriptedServer((req, res) => {
    const status = Number(/\/models\/s(\d+)\//.exec(req.url)?.[1] ?? 500);
    if (req.url.includes('/s200/')) {
      // What Triton 2.51 answers /generate on a decoupled model that sends several responses.
      sendJson(res, 200, {
        error:
          'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses',
      });
    } else if (req.url.includes('/sse400/')) {
      // What Triton 2.51 answers when /generate_stream fails before its first event.
      res.writeHead(400, { 'content-type': 'text/event-stream' });
      res.end('data: {"error":"in ensemble \'ensemble\', missing required input \'max_tokens\'"}\n\n');
    } else if (req.url.includes('/s502/')) {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body>Bad Gateway</body></html>');
    } else if (req.url.includes('/big/')) {
      sendJson(res, 200, { model_name: 'big', model_version: '1', text_output: 'x'.repeat(5000) });
    } else {
      sendJson(res, status, { error: `message for ${status}` });
    }
  });
});
afterAll(() => server.close());

const request = (model: string) => ({
  ...ensembleRequest('req-7', 'hi', 3, false),
  model,
  endpoint: 'generate' as const,
});

describe('HTTP errors', () => {
  it.each([
    [400, 'invalid_argument', false],
    [401, 'unauthenticated', false],
    [403, 'permission_denied', false],
    [404, 'not_found', false],
    [429, 'resource_exhausted', true],
    [500, 'internal', false],
    [501, 'unimplemented', false],
    [503, 'unavailable', true],
    [504, 'deadline_exceeded', false],
  ])('maps status %i to %s with the server message verbatim', async (status, code, retryable) => {
    const transport = httpTransport({ baseUrl: server.url });
    const err = await rejection(transport.infer(request(`s${status}`)));
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(retryable);
    expect(err.httpStatus).toBe(status);
    expect(err.serverMessage).toBe(`message for ${status}`);
    expect(err.requestId).toBe('req-7');
    expect(err.model).toBe(`s${status}`);
  });

  it('reads a 200 /generate body holding an error as an error, not a response', async () => {
    const transport = httpTransport({ baseUrl: server.url });
    const err = await rejection(transport.infer(request('s200')));
    expect(err.code).toBe('unimplemented');
    expect(err.httpStatus).toBe(200);
    expect(err.serverMessage).toMatch(/^generate expects model to produce exactly 1 response/);
  });

  it('reads an error sent as an SSE event under status 400', async () => {
    const transport = httpTransport({ baseUrl: server.url });
    const err = await rejection(transport.infer(request('sse400')));
    expect(err.code).toBe('invalid_argument');
    expect(err.serverMessage).toBe("in ensemble 'ensemble', missing required input 'max_tokens'");
  });

  it('keeps a non-JSON error body as the message of a 502', async () => {
    const transport = httpTransport({ baseUrl: server.url });
    const err = await rejection(transport.infer(request('s502')));
    expect(err.code).toBe('unavailable');
    expect(err.message).toContain('HTTP 502');
    expect(err.serverMessage).toContain('Bad Gateway');
  });

  it('refuses a response larger than maxResponseBytes with resource_exhausted', async () => {
    const transport = httpTransport({ baseUrl: server.url, maxResponseBytes: 1000 });
    const err = await rejection(transport.infer(request('big')));
    expect(err.code).toBe('resource_exhausted');
    expect(err.retryable).toBe(false);
    const roomy = httpTransport({ baseUrl: server.url, maxResponseBytes: 10_000 });
    const response = await roomy.infer(request('big'));
    expect(response.outputs[0]?.data).toHaveLength(1);
  });

  it('reports a refused connection as unavailable', async () => {
    const closed = await startScriptedServer(() => undefined);
    await closed.close();
    const transport = httpTransport({ baseUrl: closed.url });
    const err = await rejection(transport.infer(request('s400')));
    expect(err.code).toBe('unavailable');
    expect(err.httpStatus).toBeUndefined();
    await expect(transport.serverLive()).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('refuses a bad baseUrl and bad options before any I/O', () => {
    expect(() => httpTransport({ baseUrl: 'localhost:8000' })).toThrow(/baseUrl/);
    expect(() => httpTransport({ baseUrl: 'grpc://localhost:8001' })).toThrow(/baseUrl/);
    expect(() => httpTransport({ baseUrl: server.url, timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => httpTransport({ baseUrl: server.url, maxResponseBytes: 0 })).toThrow(/maxResponseBytes/);
  });
});
