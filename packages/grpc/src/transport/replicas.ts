import { lookup as dnsLookup } from 'node:dns/promises';
import { type NamedTransport, type ReplicaTransport, replicaTransport, type Transport } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import type {
  GrpcReplicaDnsOptions,
  GrpcReplicaListOptions,
  GrpcReplicaTransportOptions,
  GrpcTransportOptions,
} from './options.js';

type AnyOptions = GrpcTransportOptions | GrpcReplicaTransportOptions;

/** Whether the options ask for several endpoints (`baseUrls` or `dns`) instead of one `baseUrl`. */
export function isReplicaOptions(options: AnyOptions): options is GrpcReplicaTransportOptions {
  const o = options as { baseUrls?: unknown; dns?: unknown };
  return o?.baseUrls !== undefined || o?.dns !== undefined;
}

/**
 * One gRPC transport per endpoint (made by `single`, so each keeps its own connection), balanced
 * by core's `replicaTransport`. Endpoints are named by their URLs.
 */
export function grpcReplicaTransport(
  options: GrpcReplicaTransportOptions,
  single: (options: GrpcTransportOptions) => Transport,
): ReplicaTransport {
  const all = options as { baseUrl?: unknown; baseUrls?: unknown; dns?: unknown };
  if (all.baseUrl !== undefined) {
    throw invalidArgument(
      'baseUrl',
      all.baseUrl,
      'give baseUrl for one endpoint, or baseUrls or dns, not both',
    );
  }
  if (all.baseUrls !== undefined && all.dns !== undefined) {
    throw invalidArgument('dns', all.dns, 'give baseUrls or dns, not both');
  }
  return all.baseUrls !== undefined
    ? listTransport(options as GrpcReplicaListOptions, single)
    : dnsTransport(options as GrpcReplicaDnsOptions, single);
}

function listTransport(
  { baseUrls, ...rest }: GrpcReplicaListOptions,
  single: (options: GrpcTransportOptions) => Transport,
): ReplicaTransport {
  const endpoints: NamedTransport[] = [];
  try {
    for (const url of urlList(baseUrls))
      endpoints.push({ name: url, transport: single({ ...rest, baseUrl: url }) });
  } catch (err) {
    // The options are wrong for one URL: release the connections made for the ones before it.
    for (const e of endpoints) e.transport.close().catch(() => undefined);
    throw err;
  }
  return replicaTransport({ ...rest, endpoints });
}

function dnsTransport(
  { dns, lookup, ...rest }: GrpcReplicaDnsOptions,
  single: (options: GrpcTransportOptions) => Transport,
): ReplicaTransport {
  const { host, port } = hostAndPort(dns);
  const scheme = rest.tls !== undefined ? 'https' : 'http';
  // The URLs hold addresses: the certificate still has to name the host that was asked for.
  const perAddress: Omit<GrpcTransportOptions, 'baseUrl'> =
    rest.tls !== undefined
      ? { ...rest, tls: { ...rest.tls, serverName: rest.tls.serverName ?? host } }
      : rest;
  const url = (address: string) => `${scheme}://${address.includes(':') ? `[${address}]` : address}:${port}`;
  // Options that are wrong for every address fail here, not at the first request.
  single({ ...perAddress, baseUrl: url(host) })
    .close()
    .catch(() => undefined);
  const resolve = lookup ?? lookupAll;
  return replicaTransport({
    ...rest,
    endpoints: {
      protocol: 'grpc',
      discover: async () => (await resolve(host)).map(url),
      connect: (address) => single({ ...perAddress, baseUrl: address }),
    },
  });
}

async function lookupAll(host: string): Promise<readonly string[]> {
  const found = await dnsLookup(host, { all: true });
  return [...new Set(found.map((a) => a.address))];
}

function urlList(value: unknown): readonly string[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw invalidArgument('baseUrls', value, 'must be a non-empty array of URLs such as http://host:8001');
  }
  value.forEach((v, i) => {
    if (typeof v !== 'string') throw invalidArgument(`baseUrls[${i}]`, v, 'must be a URL string');
    if (value.indexOf(v) !== i) throw invalidArgument(`baseUrls[${i}]`, v, 'is listed twice');
  });
  return value;
}

function hostAndPort(value: unknown): { host: string; port: number } {
  const match = typeof value === 'string' ? /^(?:\[([^\]]+)\]|([^:/[\]]+)):(\d+)$/.exec(value) : null;
  const port = Number(match?.[3]);
  const host = match?.[1] ?? match?.[2];
  if (host === undefined || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw invalidArgument('dns', value, 'must be host:port (no scheme), e.g. triton.default.svc:8001');
  }
  return { host, port };
}
