import { httpTransport } from '@trtllm/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejection } from './helpers.js';
import { startScriptedServer } from './scripted-server.js';

let server: Awaited<ReturnType<typeof startScriptedServer>>;
beforeAll(async () => {
  server = await startScriptedServer((_req, res) => {
    res.writeHead(200);
    res.end();
  });
});
afterAll(() => server.close());

describe('headers', () => {
  it('sends static headers and per-call headers, the call winning on a shared name', async () => {
    const transport = httpTransport({
      baseUrl: server.url,
      headers: { authorization: 'Bearer static', 'x-team': 'llm' },
    });
    await transport.serverLive({ headers: { Authorization: 'Bearer per-call', 'x-trace': 't-1' } });
    const seen = server.received.at(-1)?.headers;
    expect(seen?.authorization).toBe('Bearer per-call');
    expect(seen?.['x-team']).toBe('llm');
    expect(seen?.['x-trace']).toBe('t-1');
  });

  it('refuses a per-call header value with CR or LF before sending, without showing the value', async () => {
    const transport = httpTransport({ baseUrl: server.url });
    const before = server.received.length;
    const err = await rejection(
      transport.serverReady({ headers: { authorization: 'Bearer secret-token\r\nx-evil: 1' } }),
    );
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toContain('authorization');
    expect(err.message).not.toContain('secret-token');
    expect(server.received.length).toBe(before);
  });

  it('refuses a bad static header when the transport is made', () => {
    expect(() => httpTransport({ baseUrl: server.url, headers: { 'x-key': 'abc\ndef' } })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
    expect(() => httpTransport({ baseUrl: server.url, headers: { 'bad name': 'v' } })).toThrow(/header name/);
  });

  it('keeps a path prefix of the base URL', async () => {
    const transport = httpTransport({ baseUrl: `${server.url}/triton/` });
    await transport.serverLive();
    expect(server.received.at(-1)?.url).toBe('/triton/v2/health/live');
  });
});
