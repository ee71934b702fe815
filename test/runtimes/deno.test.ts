import { describe, expect, it } from 'vitest';
import { expectSameAsNode, runCli, runtimeBin, transpileApp, useRuntimeFixture } from './support.js';

// Deno runs the app from a folder with a package.json, so it resolves the built packages from
// node_modules as it would a user's npm install (its `node` export condition included). The one
// permission granted is the network to the loopback fake: what a user's script needs too.
describe('Deno', () => {
  const fixture = useRuntimeFixture();

  it('streams and aborts over gRPC and HTTP as Node does', { timeout: 90_000 }, async () => {
    const deno = runtimeBin('deno');
    await transpileApp(fixture.project());
    const triton = fixture.triton();
    const out = await runCli(
      deno,
      ['run', '--allow-net=127.0.0.1', 'cli.js', triton.grpcUrl, triton.httpUrl, 'deno'],
      fixture.project(),
    );
    expect(out.failure).toBeUndefined();
    expect(out.runtime).toMatch(/^deno 2\./);
    for (const protocol of ['grpc', 'http'] as const) {
      await expectSameAsNode(
        out.reports.find((r) => r.transport === protocol),
        fixture.reference()[protocol],
        triton,
      );
    }
  });
});
