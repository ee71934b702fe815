import { parseTritonUrl, type TritonUrlOptions } from '@trtllm/connect';
import { TritonLlmError } from '@trtllm/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

function refusal(url: string, options?: TritonUrlOptions): TritonLlmError {
  try {
    parseTritonUrl(url, options);
  } catch (err) {
    expect(err).toBeInstanceOf(TritonLlmError);
    return err as TritonLlmError;
  }
  throw new Error(`${url} was accepted`);
}

describe('parseTritonUrl reads the scheme', () => {
  it.each([
    ['grpc://triton:8001', {}, { protocol: 'grpc', baseUrl: 'http://triton:8001' }],
    ['grpcs://triton:443', {}, { protocol: 'grpc', baseUrl: 'https://triton:443' }],
    ['GRPC://triton:8001/', {}, { protocol: 'grpc', baseUrl: 'http://triton:8001' }],
    ['grpc://[::1]:8001', {}, { protocol: 'grpc', baseUrl: 'http://[::1]:8001' }],
    ['http://triton:8000', {}, { protocol: 'http', baseUrl: 'http://triton:8000' }],
    ['https://triton', {}, { protocol: 'http', baseUrl: 'https://triton' }],
    ['http://triton:8001', { protocol: 'grpc' }, { protocol: 'grpc', baseUrl: 'http://triton:8001' }],
    ['https://triton:8001/', { protocol: 'grpc' }, { protocol: 'grpc', baseUrl: 'https://triton:8001' }],
    ['grpc://triton:8001', { protocol: 'grpc' }, { protocol: 'grpc', baseUrl: 'http://triton:8001' }],
    ['http://triton:8000', { protocol: 'http' }, { protocol: 'http', baseUrl: 'http://triton:8000' }],
  ] as const)('%s with %o', (url, options, endpoint) => {
    expect(parseTritonUrl(url, options)).toEqual(endpoint);
  });

  it.each([
    ['dns:triton.default.svc:8001', 'triton.default.svc:8001'],
    ['dns:///triton.default.svc:8001', 'triton.default.svc:8001'],
    ['DNS:10.0.0.7:8001', '10.0.0.7:8001'],
    ['dns:[fd00::7]:8001', '[fd00::7]:8001'],
  ])('%s is gRPC to every address of the name', (url, dns) => {
    expect(parseTritonUrl(url)).toEqual({ protocol: 'grpc', dns });
    expect(parseTritonUrl(url, { protocol: 'grpc' })).toEqual({ protocol: 'grpc', dns });
  });
});

describe('parseTritonUrl keeps the path of an HTTP address only', () => {
  it.each([
    ['http://gateway/triton', 'http://gateway/triton'],
    ['https://gateway:8443/a/b/', 'https://gateway:8443/a/b'],
    ['http://gateway/triton//', 'http://gateway/triton'],
  ])('%s keeps its prefix: %s', (url, baseUrl) => {
    expect(parseTritonUrl(url)).toEqual({ protocol: 'http', baseUrl });
  });

  it.each([
    ['grpc://triton:8001/v2', {}],
    ['grpcs://triton:8001/inference', {}],
    ['http://triton:8001/prefix', { protocol: 'grpc' } as const],
  ])('%s: a gRPC address with a path is refused, naming the path', (url, options) => {
    const err = refusal(url, options);
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toMatch(/gRPC address has no path/);
    expect(err.message).toContain(new URL(url).pathname);
  });
});

describe('parseTritonUrl refuses, naming the setting and the address', () => {
  it.each([
    ['ftp://triton:21', /must start with grpc:\/\/, grpcs:\/\/, http:\/\/, https:\/\/ or dns:/],
    ['triton:8001', /must start with/],
    ['localhost:8001', /must start with/],
    ['not a url', /must be an address such as/],
    ['', /must be an address such as/],
    ['http://triton:8000/?a=1', /no query or fragment/],
    ['grpc://triton:8001#x', /no query or fragment/],
    ['dns:triton', /dns:host:port or dns:\/\/\/host:port/],
    ['dns:triton:0', /dns:host:port/],
    ['dns:triton:70000', /dns:host:port/],
    ['dns://8.8.8.8/triton:8001', /names a DNS server/],
    ['grpc://', /no host/],
  ])('%s', (url, why) => {
    const err = refusal(url, { field: 'grpcUrl' });
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toMatch(why);
    expect(err.message.startsWith('grpcUrl: ')).toBe(true);
    expect(err.message).toContain(JSON.stringify(url));
  });

  it.each([
    ['grpc://triton:8001', /is a gRPC address; protocol 'http'/],
    ['grpcs://triton:8001', /is a gRPC address; protocol 'http'/],
    ['dns:triton:8001', /gRPC DNS target; protocol 'http'/],
  ])("%s with protocol 'http' contradicts itself", (url, why) => {
    const err = refusal(url, { protocol: 'http' });
    expect(err.message).toMatch(why);
    expect(err.message).toContain(url);
  });

  it('an address with credentials is refused without repeating it', () => {
    const err = refusal('https://user:s3cret@triton:8000');
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toMatch(/^url: credentials in the address are not supported; send them as headers/);
    expect(err.message).not.toContain('s3cret');
  });

  it('a protocol other than grpc or http is refused by name', () => {
    const err = refusal('http://triton:8000', { protocol: 'h3' as 'http' });
    expect(err.message).toMatch(/^protocol: must be 'grpc' or 'http'/);
  });

  it('any string is either read or refused with invalid_argument, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl(), fc.constantFrom('dns:', 'grpc://', 'dns://')), (url) => {
        try {
          const endpoint = parseTritonUrl(url);
          expect(['grpc', 'http']).toContain(endpoint.protocol);
        } catch (err) {
          expect(err).toBeInstanceOf(TritonLlmError);
          expect((err as TritonLlmError).code).toBe('invalid_argument');
        }
      }),
      { numRuns: 200 },
    );
  });
});
