import { invalidArgument, TritonLlmError } from './errors.js';

// The one rule for a Triton address, shared by @trtllm/connect (`transportFromUrl`, `--triton`,
// `grpcUrl`) and the transports' own `baseUrl` (issue 53: `grpcTransport` refused `grpc://` that
// every other entry point took). Core holds it because transports may not import connect; it
// uses only the WHATWG `URL`, which every runtime has.

/** The wire protocol a Triton address is spoken in. */
export type TritonProtocol = 'grpc' | 'http';

/**
 * Where a Triton address leads, as {@link parseTritonUrl} reads it: a gRPC endpoint at `baseUrl`
 * (`http://` plaintext or `https://` TLS, no path), every address of a DNS name over gRPC (`dns`,
 * `host:port`), or Triton's HTTP API at `baseUrl` (a path prefix kept, no trailing slash).
 */
export type TritonEndpoint =
  | { readonly protocol: 'grpc'; readonly baseUrl: string }
  | { readonly protocol: 'grpc'; readonly dns: string }
  | { readonly protocol: 'http'; readonly baseUrl: string };

/** Options of {@link parseTritonUrl}. */
export interface TritonUrlOptions {
  /**
   * The protocol of an `http://` / `https://` address, which can be either: Triton serves HTTP on
   * 8000 and gRPC on 8001, and many configurations write the gRPC port as `http://host:8001`.
   * Default `http`. `grpc://`, `grpcs://` and `dns:` are gRPC whatever this says, and
   * `protocol: 'http'` with one of them is an error.
   */
  readonly protocol?: TritonProtocol;
  /** The name of the setting the address came from, as errors name it (`grpcUrl`, `--triton`). Default `url`. */
  readonly field?: string;
}

const EXAMPLES = 'grpc://localhost:8001, http://localhost:8000 or dns:triton.default.svc:8001';

/**
 * Reads a Triton address without connecting: `grpc://host:port` (gRPC, plaintext), `grpcs://`
 * (gRPC over TLS), `http://` / `https://` (HTTP, or gRPC with `protocol: 'grpc'`), and the DNS
 * targets of gRPC clients, `dns:host:port` and `dns:///host:port` (gRPC to every address of the
 * name). An HTTP address keeps its path, the prefix of a server behind a gateway; a gRPC address
 * has none (its calls have fixed paths), so a path there is an error, as is an unknown scheme,
 * a query, a fragment or credentials (send those as headers). Every error is `invalid_argument`
 * naming the setting and the address (an address with credentials is not repeated).
 */
export function parseTritonUrl(url: string, options: TritonUrlOptions = {}): TritonEndpoint {
  const field = options.field ?? 'url';
  const bad = (why: string): TritonLlmError =>
    typeof url === 'string' && url.includes('@')
      ? new TritonLlmError(
          'invalid_argument',
          `${field}: ${why} (address not shown: it may hold credentials)`,
        )
      : invalidArgument(field, url, why);
  if (options.protocol !== undefined && options.protocol !== 'grpc' && options.protocol !== 'http') {
    throw invalidArgument('protocol', options.protocol, "must be 'grpc' or 'http'");
  }
  if (typeof url !== 'string' || url.trim() === '') throw bad(`must be an address such as ${EXAMPLES}`);
  if (/^dns:/i.test(url)) {
    if (options.protocol === 'http')
      throw bad("is a gRPC DNS target; protocol 'http' needs an http(s):// address");
    return { protocol: 'grpc', dns: dnsTarget(url.slice('dns:'.length), bad) };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw bad(`must be an address such as ${EXAMPLES}`);
  }
  const scheme = parsed.protocol;
  if (!['grpc:', 'grpcs:', 'http:', 'https:'].includes(scheme)) {
    throw bad('must start with grpc://, grpcs://, http://, https:// or dns:');
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw bad('credentials in the address are not supported; send them as headers');
  }
  if (parsed.search !== '' || parsed.hash !== '') throw bad('must have no query or fragment');
  if (parsed.host === '') throw bad('has no host');
  const grpcScheme = scheme === 'grpc:' || scheme === 'grpcs:';
  if (grpcScheme && options.protocol === 'http') {
    throw bad(`is a gRPC address; protocol 'http' needs an http:// or https:// address`);
  }
  const tls = scheme === 'grpcs:' || scheme === 'https:';
  const origin = `${tls ? 'https' : 'http'}://${parsed.host}`;
  const path = parsed.pathname.replace(/\/+$/, '');
  if (grpcScheme || options.protocol === 'grpc') {
    if (path !== '') {
      throw bad(
        `a gRPC address has no path (Triton's gRPC calls have fixed ones); remove ${JSON.stringify(path)}`,
      );
    }
    return { protocol: 'grpc', baseUrl: origin };
  }
  return { protocol: 'http', baseUrl: `${origin}${path}` };
}

/** `host:port`, `[v6]:port`, or the same after `//` (an empty authority, as gRPC clients write it). */
function dnsTarget(rest: string, bad: (why: string) => TritonLlmError): string {
  let target = rest;
  if (rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    if (slash !== 2) {
      throw bad(
        'names a DNS server (dns://server/...); only dns:host:port and dns:///host:port are supported',
      );
    }
    target = rest.slice(3);
  }
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:/[\]@?#\s]+):(\d{1,5})$/.exec(target);
  const port = Number(match?.[2]);
  if (match === null || port < 1 || port > 65_535) {
    throw bad('must be dns:host:port or dns:///host:port, e.g. dns:triton.default.svc:8001');
  }
  return target;
}
