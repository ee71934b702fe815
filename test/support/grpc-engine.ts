/**
 * `@trtllm/grpc` with every `grpcTransport` on the engine `TRTLLM_GRPC_ENGINE` names (unless the
 * test gives its own): vitest.config.ts and test/lifetime resolve the package here when that
 * variable is set, so the whole gRPC suite runs on `node:http2` with `pnpm test:node-http2`
 * (scripts/test-node-http2.sh; or `TRTLLM_GRPC_ENGINE=node-http2 pnpm vitest run --project unit`
 * with the files of your choice). A test that passes its own `engine` keeps it.
 */
import * as grpc from '../../packages/grpc/src/index.js';

export * from '../../packages/grpc/src/index.js';

const engine = process.env.TRTLLM_GRPC_ENGINE as grpc.GrpcTransportOptions['engine'];

export const grpcTransport = ((options: unknown) =>
  grpc.grpcTransport(
    typeof options === 'object' && options !== null && !Array.isArray(options)
      ? ({ engine, ...options } as grpc.GrpcTransportOptions)
      : (options as grpc.GrpcTransportOptions),
  )) as typeof grpc.grpcTransport;
