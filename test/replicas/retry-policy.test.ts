/**
 * One retry policy for every layer (docs/RELIABILITY.md, "Retries"): the client's plan travels
 * with each transport call, so a replica transport moves a request only where the client's rules
 * allow, and moves and backoff waits share one attempt budget.
 */
import { type GenerationEvent, TritonLlm } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import { failure } from '../support/failure.js';
import { PROTOCOLS, rawRequest, useThreeFakes } from './support.js';

const INPUT = [259, 260, 261];

describe.each(PROTOCOLS)('one retry policy over replicas (%s)', (protocol) => {
  const replicas = useThreeFakes();
  const dropEverywhere = (): void => {
    for (const i of [0, 1, 2]) replicas.fake(i).setFaults({ dropConnectionAfterTokens: 0 });
  };
  /** How many times the three replicas together received request `id` of `model`. */
  const sent = (model: string, id: string): number =>
    [0, 1, 2].reduce((n, i) => n + replicas.received(i, model, id).length, 0);
  const transport = () => replicas.transport(protocol, { healthIntervalMs: 0, ejectAfterFailures: 100 });

  it('infer() does not move a request whose connection dropped to another replica, unless retryNonIdempotent', async () => {
    dropEverywhere();
    const llm = new TritonLlm({ transport: transport(), model: 'tensorrt_llm_unary' });
    const once = await failure(llm.infer(rawRequest('once', INPUT, 4, 'tensorrt_llm_unary')));
    expect(once.code).toBe('unavailable');
    expect(sent('tensorrt_llm_unary', 'once')).toBe(1);

    const asked = await failure(
      llm.infer(rawRequest('asked', INPUT, 4, 'tensorrt_llm_unary'), { retry: { retryNonIdempotent: true } }),
    );
    expect(asked.code).toBe('unavailable');
    // The default three attempts in all, two of them moves: not three on each replica.
    expect(sent('tensorrt_llm_unary', 'asked')).toBe(3);
    expect(asked.message).toMatch(/after 3 attempts/);
  });

  it('generate(): moves and waits share one attempt budget, and each shows as a retry event', async () => {
    dropEverywhere();
    const events: GenerationEvent[] = [];
    const llm = new TritonLlm({
      transport: transport(),
      model: 'ensemble',
      retry: { attempts: 5, initialDelayMs: 5, maxDelayMs: 5 },
      onEvent: (e) => events.push(e),
    });
    const err = await failure(llm.generate({ prompt: 'Hi', maxTokens: 4, requestId: 'budget' }));
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/after 5 attempts/);
    expect(sent('ensemble', 'budget')).toBe(5);
    const retries = events.flatMap((e) => (e.type === 'retry' ? [[e.attempt, e.moved]] : []));
    // Three replicas: two moves, then a wait (every replica was tried), then a move again.
    expect(retries).toEqual([
      [2, true],
      [3, true],
      [4, false],
      [5, true],
    ]);
  });

  it('retry: { attempts: 1 } turns moves off as well', async () => {
    dropEverywhere();
    const llm = new TritonLlm({ transport: transport(), model: 'ensemble', retry: { attempts: 1 } });
    const err = await failure(llm.generate({ prompt: 'Hi', maxTokens: 4, requestId: 'single' }));
    expect(err.code).toBe('unavailable');
    expect(sent('ensemble', 'single')).toBe(1);
  });
});
