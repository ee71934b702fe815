import { describe, expect, it } from 'vitest';
import { expectSameAsNode, runCli, runtimeBin, transpileApp, useRuntimeFixture } from './support.js';

// Bun runs the app as a user's project would: the built packages from node_modules (Bun takes the
// `node` export condition, so @trtllm/http streams on node:net as on Node).
describe('Bun', () => {
  const fixture = useRuntimeFixture();

  it('streams and aborts over gRPC and HTTP as Node does', { timeout: 90_000 }, async () => {
    const bun = runtimeBin('bun');
    await transpileApp(fixture.project());
    const triton = fixture.triton();
    const out = await runCli(bun, ['cli.js', triton.grpcUrl, triton.httpUrl, 'bun'], fixture.project());
    expect(out.failure).toBeUndefined();
    expect(out.runtime).toMatch(/^bun 1\./);
    for (const protocol of ['grpc', 'http'] as const) {
      await expectSameAsNode(
        out.reports.find((r) => r.transport === protocol),
        fixture.reference()[protocol],
        triton,
      );
    }
  });
});
