import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { uniqueId, useFake } from './support/fake.js';
import { bool, inferRequest, isFinal, textInputs } from './support/grpc-client.js';
import { openStream } from './support/streams.js';

const h = useFake();
const REQUESTS = 40;
const TOKENS = 300;

// Triton's own clients (tritonclient, perf_analyzer) and the SDK's `multiplex: { calls: 1 }` carry
// every request on one ModelStreamInfer call (`multiplex: true`, many on each of a few). The fake used to add a 'drain' listener to the call and an
// abort listener to its signal per request, so a call with more than ten requests in flight printed
// MaxListenersExceededWarning in the user's test output.
describe('one call carrying many requests at once', () => {
  it('serves them all through a paused reader without a listener warning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => {
      if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    try {
      const s = openStream(h.grpc);
      s.call.pause();
      const ids = Array.from({ length: REQUESTS }, () => uniqueId('long-call'));
      for (const id of ids) {
        s.call.write(
          inferRequest('ensemble', textInputs('What is ML?', TOKENS, [bool('stream', true)]), { id }),
        );
      }
      s.call.end();
      // Unread, the responses fill the HTTP/2 windows within a few milliseconds and every
      // generation waits for the call to drain; the pause gives them the time to get there.
      await sleep(500);
      s.call.resume();
      expect(await s.ended).toBeUndefined();
      const finals = s.messages.map((m) => m.infer_response!).filter((r) => isFinal(r) === true);
      expect(new Set(finals.map((r) => r.id))).toEqual(new Set(ids));
      for (const id of ids) {
        const completed = h.fake.events().find((e) => e.id === id && e.event === 'completed');
        expect(completed?.tokens).toBeGreaterThan(0);
      }
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
