import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { invalidArgument, type Transport } from '@trtllm/sdk';

/**
 * A transport from a Triton address: `grpc://host:port` (or `grpcs://` for TLS) speaks gRPC,
 * `http://host:port` / `https://` speaks Triton's HTTP API.
 */
export function transportFromUrl(url: string): Transport {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidArgument(
      'triton',
      url,
      'must be a URL such as grpc://localhost:8001 or http://localhost:8000',
    );
  }
  const origin = `//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  switch (parsed.protocol) {
    case 'grpc:':
      return grpcTransport({ baseUrl: `http:${origin}` });
    case 'grpcs:':
      return grpcTransport({ baseUrl: `https:${origin}` });
    case 'http:':
    case 'https:':
      return httpTransport({ baseUrl: `${parsed.protocol}${origin}` });
    default:
      throw invalidArgument('triton', url, 'must start with grpc://, grpcs://, http:// or https://');
  }
}
