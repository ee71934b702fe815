import { request } from 'node:https';
import { Readable } from 'node:stream';
import type { FetchFunction } from '@trtllm/http';

/** TLS material for {@link httpsFetch}: a private CA and, for mutual TLS, a client certificate. */
export interface HttpsFetchTls {
  readonly ca: string;
  readonly cert?: string;
  readonly key?: string;
}

/**
 * A `fetch` over `node:https` with its own trust roots and client certificate, injected through
 * `httpTransport({ fetch })`. (In an application, the same comes from an undici `Agent` with
 * `connect: { ca, cert, key }` passed as fetch's `dispatcher`.)
 */
export function httpsFetch(tls: HttpsFetchTls): FetchFunction {
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => {
        headers[name] = value;
      });
      const req = request(
        input,
        {
          method: init.method ?? 'GET',
          headers,
          ca: tls.ca,
          ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
          ...(tls.key !== undefined ? { key: tls.key } : {}),
          ...(init.signal !== undefined && init.signal !== null ? { signal: init.signal } : {}),
        },
        (res) => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (typeof value === 'string') responseHeaders.set(name, value);
            else if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v);
          }
          const body = Readable.toWeb(res) as ReadableStream<Uint8Array>;
          resolve(new Response(body, { status: res.statusCode ?? 0, headers: responseHeaders }));
        },
      );
      req.on('error', reject);
      req.end(typeof init.body === 'string' || init.body instanceof Uint8Array ? init.body : undefined);
    });
}
