import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

// Tests run against the TypeScript sources, so a change is tested without a build step;
// `.ci/run` still builds every package and `test/packaging` checks the built output.
export default defineConfig({
  resolve: {
    alias: {
      '@trtllm/sdk': src('core'),
      '@trtllm/grpc': src('grpc'),
      '@trtllm/http': src('http'),
      '@trtllm/testing': src('testing'),
      '@trtllm/tokenizers': src('tokenizers'),
    },
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
