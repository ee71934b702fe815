import { Miniflare } from 'miniflare';
import { describe, expect, it } from 'vitest';
import {
  bundleWorker,
  expectSameAsNode,
  type SmokeReport,
  transpileApp,
  useRuntimeFixture,
} from './support.js';

// A compatibility date workerd of the installed miniflare supports; newer dates are refused.
const COMPATIBILITY_DATE = '2026-07-01';

/** Runs one bundled Worker in workerd (through miniflare) and returns what its fetch answered. */
async function runWorker(
  script: string,
  compatibilityFlags: string[],
  query: string,
): Promise<SmokeReport & { failure?: string }> {
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags,
  });
  try {
    const res = await mf.dispatchFetch(`http://worker.test/?${query}`);
    expect(res.status).toBe(200);
    return (await res.json()) as SmokeReport & { failure?: string };
  } finally {
    await mf.dispose();
  }
}

// workerd, the runtime of Cloudflare Workers, through miniflare (its local simulator), with the
// Worker bundled as wrangler bundles one.
describe('Cloudflare Workers (workerd)', () => {
  const fixture = useRuntimeFixture();

  it('@trtllm/http streams and aborts in a Worker with no compatibility flags, as on Node', {
    timeout: 90_000,
  }, async () => {
    await transpileApp(fixture.project());
    const triton = fixture.triton();
    const script = await bundleWorker(fixture.project(), 'worker-http.js');
    const report = await runWorker(script, [], `http=${encodeURIComponent(triton.httpUrl)}&tag=workerd`);
    expect(report.failure).toBeUndefined();
    await expectSameAsNode(report, fixture.reference().http, triton);
  });

  it('@trtllm/grpc streams and aborts in a Worker with nodejs_compat, as on Node', {
    timeout: 90_000,
  }, async () => {
    await transpileApp(fixture.project());
    const triton = fixture.triton();
    const script = await bundleWorker(fixture.project(), 'worker-grpc.js');
    const report = await runWorker(
      script,
      ['nodejs_compat'],
      `grpc=${encodeURIComponent(triton.grpcUrl)}&tag=workerd`,
    );
    expect(report.failure).toBeUndefined();
    await expectSameAsNode(report, fixture.reference().grpc, triton);
  });
});
