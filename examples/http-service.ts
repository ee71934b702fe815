// Embedding the SDK in an HTTP service: a small Hono app streams completions to its own clients and
// cancels the upstream Triton request when a client leaves. Run on its own it serves on PORT;
// as a smoke test (no PORT) it calls itself once, leaves early, and shows that Triton was told.
import { serve } from '@hono/node-server';
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { startFakeTriton } from '@trtllm/testing';
import { Hono } from 'hono';
import { stream } from 'hono/streaming';

const fake = !process.env.TRITON_GRPC_URL ? await startFakeTriton({ itlMs: 10 }) : undefined;
const transport = grpcTransport({ baseUrl: process.env.TRITON_GRPC_URL || fake!.grpcUrl });
const llm = new TritonLlm({
  transport,
  model: 'tensorrt_llm_bls',
  logger: { warn: (m) => console.log(`warning: ${m}`) },
});
// The raw model stops generating when its client leaves; use it where freeing the GPU matters.
const raw = new TritonLlm({ transport, model: 'tensorrt_llm' });

const app = new Hono();
app.post('/complete', async (c) => {
  const { prompt, maxTokens = 64 } = await c.req.json<{ prompt: string; maxTokens?: number }>();
  return stream(c, async (out) => {
    // The request's signal aborts when the client disconnects, which cancels upstream.
    for await (const chunk of llm.stream({ prompt, maxTokens }, { signal: c.req.raw.signal })) {
      if (!chunk.done) await out.write(chunk.text);
    }
  });
});
app.post('/ids', async (c) => {
  const { inputIds, maxTokens = 64 } = await c.req.json<{ inputIds: number[]; maxTokens?: number }>();
  return stream(c, async (out) => {
    for await (const chunk of raw.stream({ inputIds, maxTokens }, { signal: c.req.raw.signal })) {
      if (!chunk.done) await out.write(`${chunk.tokenIds.join(' ')} `);
    }
  });
});

const port = Number(process.env.PORT ?? 0);
const http = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' });
await new Promise((resolve) => http.once('listening', resolve));
const address = http.address();
const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : port}`;
console.log(`service on ${url}`);

if (process.env.PORT === undefined) {
  const whole = await fetch(`${url}/complete`, {
    method: 'POST',
    body: JSON.stringify({ prompt: 'What is ML?', maxTokens: 20 }),
  });
  console.log(`POST /complete -> ${JSON.stringify(await whole.text())}`);
  const leaving = new AbortController();
  const res = await fetch(`${url}/ids`, {
    method: 'POST',
    body: JSON.stringify({ inputIds: [259, 260], maxTokens: 5000 }),
    signal: leaving.signal,
  });
  const reader = res.body!.getReader();
  await reader.read();
  leaving.abort();
  if (fake !== undefined) {
    const seen = await fake.waitForEvent((e) => e.model === 'tensorrt_llm' && e.event === 'cancelled', 5000);
    console.log(
      `client left after the first chunk; Triton cancelled request ${seen.id} after ${seen.tokens} of 5000 tokens`,
    );
  }
  http.close();
  await transport.close();
  await fake?.close();
}
