import { type GrpcTlsOptions, grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import type { Transport } from '@trtllm/sdk';
import { checkOptionNames, invalidArgument } from '@trtllm/sdk/transport';
import { parseTritonUrl, type TritonUrlOptions } from './triton-url.js';

/** Options of {@link transportFromUrl}: how the address is read, and what every request carries. */
export interface TransportFromUrlOptions extends TritonUrlOptions {
  /** Headers (gRPC metadata) sent with every request, such as `authorization`; a call's own win by name. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Certificates for gRPC over TLS (a private CA, mutual TLS, a server name): needs a TLS address
   * (`grpcs://`, or `https://` with `protocol: 'grpc'`); with a `dns:` target it turns TLS on. An
   * HTTP address checks certificates the way the runtime's `fetch` does, so it takes none here.
   */
  readonly tls?: GrpcTlsOptions;
}

// Every option's name, so that a misspelt one (`header`, `protocl`) is refused with the closest.
const OPTION_NAMES: Readonly<Record<keyof TransportFromUrlOptions, true>> = {
  protocol: true,
  field: true,
  headers: true,
  tls: true,
};

/**
 * The transport for a Triton address, by the rules of {@link parseTritonUrl}: `grpc://` and
 * `grpcs://` give `grpcTransport()`, `dns:host:port` gives `grpcTransport({ dns })` (every
 * address of the name, looked up again as it changes), and `http://` / `https://` give
 * `httpTransport()`, or `grpcTransport()` with `protocol: 'grpc'`. The caller owns the transport
 * and closes it (`close()`, or `await using`); left open, it never keeps an idle process alive.
 * Bad input throws `invalid_argument` before anything connects.
 *
 * ```ts
 * const llm = new TritonLlm({ transport: transportFromUrl('grpc://localhost:8001'), model: 'ensemble' });
 * ```
 */
export function transportFromUrl(
  url: string,
  options: TransportFromUrlOptions = {},
): Transport & AsyncDisposable {
  if (typeof options === 'object' && options !== null) checkOptionNames(options, OPTION_NAMES);
  const endpoint = parseTritonUrl(url, options);
  const { headers, tls } = options;
  const common = headers !== undefined ? { headers } : {};
  if (endpoint.protocol === 'http') {
    if (tls !== undefined) {
      throw invalidArgument(
        'tls',
        tls,
        `applies to gRPC; the HTTP address ${options.field ?? 'url'} uses the certificates fetch trusts (NODE_EXTRA_CA_CERTS on Node)`,
      );
    }
    return httpTransport({ baseUrl: endpoint.baseUrl, ...common });
  }
  if ('dns' in endpoint)
    return grpcTransport({ dns: endpoint.dns, ...common, ...(tls !== undefined ? { tls } : {}) });
  if (tls !== undefined && !endpoint.baseUrl.startsWith('https:')) {
    throw invalidArgument(
      options.field ?? 'url',
      url,
      'is a plaintext address; tls options need grpcs:// (or https:// with protocol grpc)',
    );
  }
  return grpcTransport({ baseUrl: endpoint.baseUrl, ...common, ...(tls !== undefined ? { tls } : {}) });
}
