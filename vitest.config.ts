import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

// Tests run against the TypeScript sources, so a change is tested without a build step;
// `.ci/run` still builds every package and `test/packaging` checks the built output.
// The subpath comes first: vite maps '@trtllm/sdk' to every '@trtllm/sdk/...' import too.
const alias = {
  '@trtllm/sdk/transport': fileURLToPath(new URL('./packages/core/src/transport-kit.ts', import.meta.url)),
  '@trtllm/sdk': src('core'),
  // TRTLLM_GRPC_ENGINE=node-http2 runs every grpcTransport of the tests on node:http2 (test/support/grpc-engine.ts).
  '@trtllm/grpc':
    process.env.TRTLLM_GRPC_ENGINE === undefined
      ? src('grpc')
      : fileURLToPath(new URL('./test/support/grpc-engine.ts', import.meta.url)),
  // Tests run on Node, so they get the package's Node entry (its `node` export condition).
  '@trtllm/http': fileURLToPath(new URL('./packages/http/src/node.ts', import.meta.url)),
  '@trtllm/connect': src('connect'),
  '@trtllm/testing': src('testing'),
  '@trtllm/tokenizers': src('tokenizers'),
  '@trtllm/openai': src('openai'),
  '@trtllm/bench': src('bench'),
  '@trtllm/ai-sdk': src('ai-sdk'),
  '@trtllm/langchain': src('langchain'),
};

/** The timing project's files, kept out of the unit project. */
const TIMING = ['packages/bench/test/measurement-accuracy.test.ts'];

export default defineConfig({
  resolve: { alias },
  test: {
    testTimeout: 20_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Vitest's default, one fewer than the cores, runs the unit project one file at a time on a 2-core
    // machine, while most files spend their time waiting on servers and child processes of their own.
    // Two at a time halves the unit project's time there (README, Quick start); the timing and
    // conformance projects stay one file at a time (singleFork below), so this changes nothing for them.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['test/conformance/**', ...TIMING, '**/node_modules/**'],
          testTimeout: 20_000,
          hookTimeout: 60_000,
        },
      },
      {
        resolve: { alias },
        test: {
          // Tests that compare measured times with injected ones: on two cores shared with the unit
          // project's parallel files a process can wake 40+ ms late, which no fixed tolerance
          // absorbs. Here they run one file at a time, on a machine nothing else of ours is loading.
          name: 'timing',
          include: TIMING,
          testTimeout: 60_000,
          hookTimeout: 60_000,
          poolOptions: { forks: { singleFork: true } },
        },
      },
      {
        resolve: { alias },
        test: {
          // One suite over the fake and the real Triton; its global setup starts the real server.
          name: 'conformance',
          include: ['test/conformance/**/*.test.ts'],
          globalSetup: ['test/conformance/global-setup.ts'],
          // A case under which the real server's Python stub died runs once more on a restarted server;
          // any other failure stands (see stub-crash.ts).
          setupFiles: ['test/conformance/stub-crash.ts'],
          retry: 1,
          testTimeout: 30_000,
          hookTimeout: 180_000,
          // The real server is shared; keep its files from competing for the machine's two cores.
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
