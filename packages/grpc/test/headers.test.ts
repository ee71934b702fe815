import { grpcTransport } from '@trtllm/grpc';
import { createTensor, type Transport, TritonLlmError } from '@trtllm/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedServer, startScriptedServer } from './scripted-server.js';
import { rejection } from './support.js';

// A server of our own shows the request headers; the fake Triton does not record them.
let server: ScriptedServer;
beforeAll(async () => {
  // ServerLiveResponse { live: true }; an empty ModelInferResponse for ModelInfer.
  server = await startScriptedServer((path) => ({
    messages: [path.endsWith('/ModelInfer') ? new Uint8Array(0) : Uint8Array.of(0x08, 0x01)],
  }));
});
afterAll(async () => {
  await server.close();
});

describe('metadata headers', () => {
  let transport: Transport;
  beforeAll(() => {
    transport = grpcTransport({
      baseUrl: server.baseUrl,
      headers: { authorization: 'Bearer static-token', 'x-tenant': 'static' },
    });
  });
  afterAll(async () => {
    await transport.close();
  });

  it('sends the static headers on every call and lets per-call headers override them', async () => {
    expect(await transport.serverLive()).toBe(true);
    expect(await transport.serverLive({ headers: { 'x-tenant': 'per-call', 'x-trace': 'abc' } })).toBe(true);
    const [first, second] = server.calls.slice(-2);
    expect(first?.authorization).toBe('Bearer static-token');
    expect(first?.['x-tenant']).toBe('static');
    expect(second?.authorization).toBe('Bearer static-token');
    expect(second?.['x-tenant']).toBe('per-call');
    expect(second?.['x-trace']).toBe('abc');
  });

  it('sends the timeout as a gRPC deadline', async () => {
    await transport.serverLive({ timeoutMs: 5000 });
    const timeout = String(server.calls.at(-1)?.['grpc-timeout']);
    expect(timeout).toMatch(/^\d+m$/);
    expect(Number.parseInt(timeout, 10)).toBeLessThanOrEqual(5000);
  });

  it('refuses a header value with CR or LF before sending, without echoing the value', async () => {
    const before = server.calls.length;
    const err = await rejection(transport.serverLive({ headers: { authorization: 'Bearer se\r\ncret' } }));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toContain('authorization');
    expect(err.message).not.toContain('cret');
    expect(server.calls.length).toBe(before);
  });

  it('sends header names in lower case and values without edge spaces, the later name winning', async () => {
    const t = grpcTransport({ baseUrl: server.baseUrl, headers: { 'X-Tenant': '  static\t' } });
    try {
      await t.serverLive({ headers: { 'X-Trace': ' abc ' } });
      await t.serverLive({ headers: { 'x-TENANT': 'per-call' } });
    } finally {
      await t.close();
    }
    const [first, second] = server.calls.slice(-2);
    expect(first?.['x-tenant']).toBe('static');
    expect(first?.['x-trace']).toBe('abc');
    expect(second?.['x-tenant']).toBe('per-call');
  });

  it('refuses a header value with a character past U+00FF before sending, naming the header', async () => {
    const before = server.calls.length;
    const err = await rejection(transport.serverLive({ headers: { 'x-city': 'Zürich 北京' } }));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toContain('x-city');
    expect(err.message).not.toContain('Zürich');
    expect(server.calls.length).toBe(before);
  });

  it('refuses a static header value with LF when the transport is made', () => {
    let err: unknown;
    try {
      grpcTransport({ baseUrl: server.baseUrl, headers: { authorization: 'token\nx-evil: 1' } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expect((err as TritonLlmError).message).not.toContain('x-evil');
  });
});

describe('gzip', () => {
  it('offers gzip responses and compresses a large request when enabled', async () => {
    const t = grpcTransport({ baseUrl: server.baseUrl, gzip: true });
    try {
      await t.serverLive();
      expect(String(server.calls.at(-1)?.['grpc-accept-encoding'])).toContain('gzip');
      await t.infer({
        model: 'm',
        id: '1',
        inputs: [createTensor('text', 'BYTES', [1, 1], ['x'.repeat(8192)])],
      });
      expect(server.calls.at(-1)?.['grpc-encoding']).toBe('gzip');
    } finally {
      await t.close();
    }
  });

  it('asks for no compression when disabled', async () => {
    const t = grpcTransport({ baseUrl: server.baseUrl });
    try {
      await t.serverLive();
      const call = server.calls.at(-1);
      expect(call?.['grpc-encoding']).toBeUndefined();
      expect(String(call?.['grpc-accept-encoding'] ?? '')).not.toContain('gzip');
    } finally {
      await t.close();
    }
  });
});
