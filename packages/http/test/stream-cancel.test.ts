import { httpTransport } from '@trtllm/http';
import { describe, expect, it } from 'vitest';
import { useFakeTriton } from './fake.js';
import { drain, rawRequest, rejection, stopRequest } from './helpers.js';

// Tokens every 20 ms, so a 1000-token request is still running when the test acts.
const fake = useFakeTriton({ itlMs: 20 });
const PROMPT = [259, 260, 261];
const transport = (timeoutMs?: number) =>
  httpTransport({ baseUrl: fake().httpUrl, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
const long = (id: string) => rawRequest(id, PROMPT, 1000, { streaming: true });

describe('cancelling, stopping and timing out a stream', () => {
  it('aborting the signal fails the stream with cancelled and cancels the raw model', async () => {
    const controller = new AbortController();
    const { responses, error } = await drain(
      transport().stream(long('c-1'), { signal: controller.signal }),
      (_r, i) => {
        if (i === 1) controller.abort();
      },
    );
    expect(responses).toHaveLength(2);
    expect(error?.code).toBe('cancelled');
    const cancelled = await fake().waitForEvent((e) => e.id === 'c-1' && e.event === 'cancelled');
    expect(cancelled.model).toBe('tensorrt_llm');
    expect(cancelled.tokens).toBeLessThan(1000);
  });

  it('breaking out of the loop cancels the request on the server', async () => {
    let seen = 0;
    for await (const response of transport().stream(long('c-2'))) {
      expect(response.final).toBe(false);
      seen += 1;
      if (seen === 2) break;
    }
    const cancelled = await fake().waitForEvent((e) => e.id === 'c-2' && e.event === 'cancelled');
    expect(cancelled.tokens).toBeLessThan(1000);
  });

  it('an already aborted signal fails at once with cancelled', async () => {
    const { error } = await drain(transport().stream(long('c-3'), { signal: AbortSignal.abort() }));
    expect(error?.code).toBe('cancelled');
    await expect(transport().serverLive({ signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'cancelled',
    });
  });

  it('sendStop ends the running request gracefully with its final response', async () => {
    const stream = transport().stream(long('c-4'));
    let stop: Promise<void> | undefined;
    const { responses, error } = await drain(stream, (_r, i) => {
      if (i === 1) stop = stream.sendStop(stopRequest('c-4'));
    });
    await stop;
    expect(stop).toBeDefined();
    expect(error).toBeUndefined();
    expect(responses.at(-1)?.final).toBe(true);
    const stopped = await fake().waitForEvent((e) => e.id === 'c-4' && e.event === 'stopped');
    expect(stopped.tokens).toBeLessThan(1000);
  });

  it('a stalled stream fails with deadline_exceeded after the tokens it delivered', async () => {
    fake().setFaults({ stallAfterTokens: 2 });
    const { responses, error } = await drain(transport().stream(long('c-5'), { timeoutMs: 2000 }));
    expect(responses).toHaveLength(2);
    expect(error?.code).toBe('deadline_exceeded');
  });

  it('the transport default deadline applies to unary calls, and a call may set its own', async () => {
    fake().setFaults({ stallAfterTokens: 0 });
    const unary = {
      ...rawRequest('c-6', PROMPT, 5, { model: 'tensorrt_llm_unary' }),
      endpoint: 'generate' as const,
    };
    const err = await rejection(transport(300).infer(unary));
    expect(err.code).toBe('deadline_exceeded');
    fake().setFaults(undefined);
    // 50 tokens 20 ms apart outlast the 300 ms default, so only the call's own deadline lets it finish.
    const slow = {
      ...rawRequest('c-7', PROMPT, 50, { model: 'tensorrt_llm_unary' }),
      endpoint: 'generate' as const,
    };
    const ok = await transport(300).infer(slow, { timeoutMs: 60_000 });
    expect(ok.id).toBe('c-7');
  });
});
