import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { invalidArgument, type Transport } from '@trtllm/sdk';

/**
 * Where the Triton server is: exactly one of a gRPC address (`http://host:8001`, or `grpc://host:8001`;
 * `https://` / `grpcs://` for TLS), an HTTP address (`http://host:8000`), or a transport you built
 * with `grpcTransport()` / `httpTransport()` (for TLS certificates, replicas, multiplexing).
 */
export type TritonConnection =
  | { readonly grpcUrl: string; readonly httpUrl?: undefined; readonly transport?: undefined }
  | { readonly httpUrl: string; readonly grpcUrl?: undefined; readonly transport?: undefined }
  | { readonly transport: Transport; readonly grpcUrl?: undefined; readonly httpUrl?: undefined };

/** The transport of `connection`, and whether this package made it (and so must close it). */
export function transportOf(connection: Partial<Record<'grpcUrl' | 'httpUrl' | 'transport', unknown>>): {
  readonly transport: Transport;
  readonly owned: boolean;
} {
  const given = (['grpcUrl', 'httpUrl', 'transport'] as const).filter((k) => connection[k] !== undefined);
  if (given.length !== 1) {
    throw invalidArgument(
      given.length === 0 ? 'grpcUrl' : given.join(', '),
      given.length === 0 ? undefined : given.map((k) => connection[k]),
      'give exactly one of grpcUrl, httpUrl or transport',
    );
  }
  const { grpcUrl, httpUrl, transport } = connection;
  if (transport !== undefined) {
    const t = transport as Partial<Transport> | null;
    if (t === null || typeof t !== 'object' || typeof t.stream !== 'function') {
      throw invalidArgument(
        'transport',
        transport,
        'must be a transport from grpcTransport() or httpTransport()',
      );
    }
    return { transport: transport as Transport, owned: false };
  }
  if (grpcUrl !== undefined) {
    const url = parseUrl('grpcUrl', grpcUrl, ['http:', 'https:', 'grpc:', 'grpcs:']);
    const scheme = url.protocol === 'grpc:' ? 'http:' : url.protocol === 'grpcs:' ? 'https:' : url.protocol;
    return { transport: grpcTransport({ baseUrl: `${scheme}//${url.host}` }), owned: true };
  }
  const url = parseUrl('httpUrl', httpUrl, ['http:', 'https:']);
  return { transport: httpTransport({ baseUrl: url.href.replace(/\/+$/, '') }), owned: true };
}

function parseUrl(field: string, value: unknown, schemes: readonly string[]): URL {
  if (typeof value !== 'string') throw invalidArgument(field, value, 'must be a URL string');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidArgument(
      field,
      value,
      `must be a URL such as ${schemes[0]}//localhost:800${field === 'grpcUrl' ? 1 : 0}`,
    );
  }
  if (!schemes.includes(url.protocol)) {
    throw invalidArgument(field, value, `must start with ${schemes.map((s) => `${s}//`).join(', ')}`);
  }
  return url;
}
