import { TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';

/** The base URL without a trailing slash, refusing anything that is not an absolute http(s) URL. */
export function normalizeBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw badBaseUrl(baseUrl, 'must be an absolute URL such as http://localhost:8000');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw badBaseUrl(baseUrl, 'must use http: or https: (gRPC needs @trtllm/grpc)');
  }
  if (url.username !== '' || url.password !== '') {
    // fetch refuses such URLs anyway, and error messages and logs would carry them.
    throw badBaseUrl(baseUrl, 'must not hold credentials; send them in headers (e.g. authorization)');
  }
  if (url.search !== '' || url.hash !== '') {
    throw badBaseUrl(baseUrl, 'must not carry a query or fragment');
  }
  return url.href.replace(/\/+$/, '');
}

/** The error for a bad base URL; one that may hold credentials (anything with `@`) is not shown. */
function badBaseUrl(baseUrl: unknown, why: string): TritonLlmError {
  if (typeof baseUrl === 'string' && baseUrl.includes('@')) {
    return new TritonLlmError('invalid_argument', `baseUrl: ${why} (URL not shown: it may hold credentials)`);
  }
  return invalidArgument('baseUrl', baseUrl, why);
}
