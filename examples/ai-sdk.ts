// The Vercel AI SDK on Triton: streamText through @trtllm/ai-sdk, JSON output with Output.object
// (guided decoding), and an abort that reaches the server.
import { createTriton } from '@trtllm/ai-sdk';
import { fakeTokenizer } from '@trtllm/testing';
import { generateText, Output, streamText } from 'ai';
import { z } from 'zod';
import { server } from './_server.js';

const triton = await server({ itlMs: 5 });
const provider = createTriton({ grpcUrl: triton.grpcUrl });

// streamText: text deltas as they arrive, then the finish reason, usage and the Triton request id.
const result = streamText({
  model: provider('tensorrt_llm_bls'),
  instructions: 'You are a concise assistant.',
  prompt: 'What is machine learning?',
  maxOutputTokens: 32,
});
for await (const delta of result.textStream) process.stdout.write(delta);
const usage = await result.usage;
const meta = (await result.providerMetadata)?.trtllm as { requestId?: string } | undefined;
console.log(
  `\nstreamText: finish=${await result.finishReason} tokens=${usage.outputTokens} request=${meta?.requestId}`,
);

// Structured output (Output.object; generateObject in older code): the zod schema becomes a
// JSON-schema guide for the model's guided decoding. The ensemble suits generateText, which it
// decodes whole; streamed, it decodes token by token (characters split over tokens arrive as
// U+FFFD), so streamText above uses the BLS with accumulate_tokens, whose streamed text is exact.
// (streamText with tools or JSON on the ensemble is generated whole, with a warning saying so.)
const { output } = await generateText({
  model: provider('ensemble'),
  output: Output.object({
    schema: z.object({ topic: z.string(), difficulty: z.enum(['easy', 'hard']), minutes: z.number().min(5) }),
  }),
  prompt: 'Plan a lesson about machine learning.',
  maxOutputTokens: 100,
});
console.log(`Output.object: ${JSON.stringify(output)}`);

// Abort mid-stream: the raw model (with a tokenizer) stops on the server; an ensemble cannot (see the
// README's early-stop table). The SDK's `end` event carries the report of how the server was told.
let report: (value: string) => void = () => undefined;
const reported = new Promise<string>((resolve) => {
  report = resolve;
});
const raw = createTriton({
  grpcUrl: triton.grpcUrl,
  tokenizer: fakeTokenizer,
  onEvent: (event) => {
    if (event.type !== 'end' || event.result.earlyStop === undefined) return;
    const { via, serverStopsGenerating } = event.result.earlyStop;
    report(
      `finish=${event.result.finishReason} via=${via.join(',')} server stops generating: ${serverStopsGenerating}`,
    );
  },
});
const controller = new AbortController();
const aborted = streamText({
  model: raw('tensorrt_llm'),
  prompt: 'Tell me everything about machine learning.',
  maxOutputTokens: 2000,
  abortSignal: controller.signal,
});
let deltas = 0;
for await (const _ of aborted.textStream) if (++deltas === 5) controller.abort();
console.log(`abort after ${deltas} deltas: ${await reported}`);

await raw.close();
await provider.close();
await triton.close();
