import { TritonLlm } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

// Issue 53: the "ensemble keeps generating" advisory was reported as printed on every cancelled
// request, in the middle of the streamed output. It is said once per client and model.
describe.each(PROTOCOLS)('the keeps-generating warning over %s', (protocol) => {
  const fake = useFakeTriton({ itlMs: 2 });

  /**
   * Streams a long request and ends it early after three chunks, the way `end` says; returns
   * whether the final chunk says the server keeps generating (undefined after a break: no final).
   */
  async function cancelled(llm: TritonLlm, end: 'abort' | 'break' | 'stop'): Promise<boolean | undefined> {
    const controller = new AbortController();
    const stream = llm.stream({ prompt: 'Hello world', maxTokens: 200 }, { signal: controller.signal });
    let chunks = 0;
    let keepsGenerating: boolean | undefined;
    for await (const chunk of stream) {
      if (chunk.done) keepsGenerating = chunk.result.earlyStop?.serverStopsGenerating === false;
      if (chunk.done || ++chunks < 3) continue;
      if (end === 'break') break;
      if (end === 'abort') controller.abort();
      else await stream.stop();
    }
    return keepsGenerating;
  }

  it('is logged once for several cancelled ensemble requests of one client', async () => {
    const warnings: string[] = [];
    const llm = new TritonLlm({
      transport: fake.transport(protocol),
      model: 'ensemble',
      logger: { warn: (m) => warnings.push(m) },
    });
    const reports: (boolean | undefined)[] = [];
    for (const end of ['abort', 'break', 'stop', 'abort', 'break'] as const)
      reports.push(await cancelled(llm, end));
    reports.push(
      ...(await Promise.all([cancelled(llm, 'abort'), cancelled(llm, 'stop'), cancelled(llm, 'abort')])),
    );
    // Every request that reported its end was ended early and left the server generating.
    expect(reports).toEqual([true, undefined, true, true, undefined, true, true, true]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("'ensemble'");
  });

  it('is logged once per model of a client, and again by another client', async () => {
    const warnings: string[] = [];
    const logger = { warn: (m: string) => warnings.push(m) };
    const transport = fake.transport(protocol);
    const ensemble = new TritonLlm({ transport, model: 'ensemble', logger });
    const bls = new TritonLlm({ transport, model: 'tensorrt_llm_bls', logger });
    const again = new TritonLlm({ transport, model: 'ensemble', logger });
    for (const llm of [ensemble, bls, again, ensemble, bls, again]) await cancelled(llm, 'abort');
    expect(warnings.map((w) => /'([^']+)'/.exec(w)?.[1])).toEqual([
      'ensemble',
      'tensorrt_llm_bls',
      'ensemble',
    ]);
  });

  it('is not logged for a model that stops on the server', async () => {
    const warnings: string[] = [];
    const llm = new TritonLlm({
      transport: fake.transport(protocol),
      model: 'tensorrt_llm',
      logger: { warn: (m) => warnings.push(m) },
    });
    const stream = llm.stream({ inputIds: [259], maxTokens: 200 });
    for await (const chunk of stream) if (!chunk.done) break;
    expect(warnings).toEqual([]);
  });
});
