import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { post, uniqueId, useFake } from './support/fake.js';
import { bool, inferRequest, rawInputs } from './support/grpc-client.js';
import { openStream } from './support/streams.js';

const h = useFake();
const TOKENS = 10_000;

// A reader that stops reading must stop the generator (flow control), not let it run ahead into
// memory. Unthrottled, the fake finishes 10,000 tokens well within the pause below; the pause only
// gives a broken server the time to show it, so a slow machine cannot make this test fail falsely.
describe('backpressure', () => {
  it('holds a gRPC generation while the client does not read', async () => {
    const id = uniqueId('bp-grpc');
    const s = openStream(h.grpc);
    s.call.write(
      inferRequest('tensorrt_llm', rawInputs([5], TOKENS, [bool('streaming', true)]), {
        id,
        outputs: ['output_ids'],
      }),
    );
    await s.received(1);
    s.call.pause();
    await sleep(1000);
    expect(h.fake.events().some((e) => e.id === id && e.event === 'completed')).toBe(false);
    s.call.resume();
    s.call.end();
    await s.ended;
    expect((await h.fake.waitForEvent((e) => e.id === id && e.event === 'completed')).tokens).toBe(TOKENS);
    // The last token carries the final flag: no empty final after it.
    expect(s.messages).toHaveLength(TOKENS);
  });

  it('holds an HTTP generate_stream while the client does not read', async () => {
    const id = uniqueId('bp-http');
    const res = await post(h.fake, '/v2/models/ensemble/generate_stream', {
      id,
      text_input: 'Hello',
      max_tokens: TOKENS,
      stream: true,
    });
    const reader = res.body!.getReader();
    await reader.read();
    await sleep(1000);
    expect(h.fake.events().some((e) => e.id === id && e.event === 'completed')).toBe(false);
    let events = 0;
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      events += decoder.decode(value, { stream: true }).split('\n\n').length - 1;
    }
    expect(events).toBeGreaterThan(TOKENS / 2);
    await h.fake.waitForEvent((e) => e.id === id && e.model === 'ensemble' && e.event === 'completed');
  });
});
