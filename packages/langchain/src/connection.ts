import { transportFromUrl } from '@trtllm/connect';
import type { Transport } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';

/**
 * Where the Triton server is: exactly one of a gRPC address (`http://host:8001` or `grpc://host:8001`;
 * `https://` / `grpcs://` for TLS; `dns:host:8001` for every address of a name), an HTTP address
 * (`http://host:8000`, or `https://gateway/triton` behind a gateway), or a transport you built with
 * `grpcTransport()` / `httpTransport()` (for TLS certificates, replicas, multiplexing). The addresses
 * follow the rules of `transportFromUrl` of `@trtllm/connect`: a gRPC address has no path.
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
  // The protocol is the setting's: `grpcUrl: 'http://host:8001'` is gRPC, as Triton's docs write it.
  if (grpcUrl !== undefined) {
    return {
      transport: transportFromUrl(grpcUrl as string, { protocol: 'grpc', field: 'grpcUrl' }),
      owned: true,
    };
  }
  return {
    transport: transportFromUrl(httpUrl as string, { protocol: 'http', field: 'httpUrl' }),
    owned: true,
  };
}
