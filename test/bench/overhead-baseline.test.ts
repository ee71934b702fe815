import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { baselineEnv } from '../../bench/overhead/processes.js';

const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url));

/** Where the tsconfig a baseline child gets sends each `@trtllm/*` name, as absolute paths. */
function targets(env: NodeJS.ProcessEnv): Record<string, string> {
  const file = env.TSX_TSCONFIG_PATH!;
  const config = JSON.parse(readFileSync(file, 'utf8')) as {
    extends: string;
    compilerOptions: { baseUrl: string; paths: Record<string, string[]> };
  };
  // The child keeps everything else of the dist tsconfig.
  expect(config.extends).toBe(join(CHECKOUT, 'bench/overhead/tsconfig.dist.json'));
  return Object.fromEntries(
    Object.entries(config.compilerOptions.paths).map(([name, [target]]) => [
      name,
      resolve(config.compilerOptions.baseUrl, target!),
    ]),
  );
}

describe('bench:overhead baseline children', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("resolve the SDK and both transports to the baseline's builds, the bench's own packages to this checkout", () => {
    vi.stubEnv('BENCH_BASELINE_PART', undefined);
    const env = baselineEnv('/elsewhere/base', { KEEP: 'me' });
    expect(env.KEEP).toBe('me');
    const paths = targets(env);
    expect(paths['@trtllm/sdk']).toBe('/elsewhere/base/packages/core/dist/index.js');
    expect(paths['@trtllm/grpc']).toBe('/elsewhere/base/packages/grpc/dist/index.js');
    // The Node entry, as Node's resolver picks it for users.
    expect(paths['@trtllm/http']).toBe('/elsewhere/base/packages/http/dist/node.js');
    expect(paths['@trtllm/bench']).toBe(join(CHECKOUT, 'packages/bench/dist/index.js'));
    expect(paths['@trtllm/testing']).toBe(join(CHECKOUT, 'packages/testing/dist/index.js'));
  });

  it("keep this checkout's core under BENCH_BASELINE_PART=transport, the baseline's transports only", () => {
    vi.stubEnv('BENCH_BASELINE_PART', 'transport');
    const paths = targets(baselineEnv('/elsewhere/other', {}));
    expect(paths['@trtllm/sdk']).toBe(join(CHECKOUT, 'packages/core/dist/index.js'));
    expect(paths['@trtllm/grpc']).toBe('/elsewhere/other/packages/grpc/dist/index.js');
    expect(paths['@trtllm/http']).toBe('/elsewhere/other/packages/http/dist/node.js');
  });
});
