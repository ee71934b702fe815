import { type NamedTransport, type ReplicaTransport, replicaTransport, type Transport } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import type { HttpReplicaTransportOptions, HttpTransportOptions } from '../options.js';

/** Whether the options ask for several endpoints (`baseUrls`) instead of one `baseUrl`. */
export function isReplicaOptions(
  options: HttpTransportOptions | HttpReplicaTransportOptions,
): options is HttpReplicaTransportOptions {
  return (options as { baseUrls?: unknown })?.baseUrls !== undefined;
}

/** One HTTP transport per URL (made by `single`), balanced by core's `replicaTransport`. */
export function httpReplicaTransport(
  options: HttpReplicaTransportOptions,
  single: (options: HttpTransportOptions) => Transport,
): ReplicaTransport {
  const { baseUrls, baseUrl, ...rest } = options as HttpReplicaTransportOptions & { baseUrl?: unknown };
  if (baseUrl !== undefined) {
    throw invalidArgument(
      'baseUrl',
      baseUrl,
      'give baseUrl for one endpoint or baseUrls for several, not both',
    );
  }
  if (!Array.isArray(baseUrls) || baseUrls.length === 0) {
    throw invalidArgument('baseUrls', baseUrls, 'must be a non-empty array of URLs such as http://host:8000');
  }
  const endpoints: NamedTransport[] = baseUrls.map((url, i) => {
    if (typeof url !== 'string') throw invalidArgument(`baseUrls[${i}]`, url, 'must be a URL string');
    if (baseUrls.indexOf(url) !== i) throw invalidArgument(`baseUrls[${i}]`, url, 'is listed twice');
    // Nothing to release if a later URL fails: an HTTP transport holds no connection until a call.
    return { name: url, transport: single({ ...rest, baseUrl: url }) };
  });
  return replicaTransport({ ...rest, endpoints });
}
