// An AI SDK agent straight on Triton: generateText with a tool and stopWhen. The model calls the
// tool, the AI SDK runs it, and the model answers from its result; streamText shows the call as it
// streams. No OpenAI-compatible server in between.
import { createTriton } from '@trtllm/ai-sdk';
import { fakeScript } from '@trtllm/testing';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { z } from 'zod';
import { server } from './_server.js';

const triton = await server();
// On the embedded fake Triton, a marker in the prompt scripts each reply: a Qwen-style <tool_call>
// first, then the answer (carried in the tool's result). A real model writes its own.
const onFake = !(process.env.TRITON_GRPC_URL && process.env.TRITON_HTTP_URL);
const scripted = (reply: string): string => (onFake ? ` ${fakeScript(reply)}` : '');
const callWeather = (city: string): string =>
  `<tool_call>\n${JSON.stringify({ name: 'get_weather', arguments: { city } })}\n</tool_call>`;

// The chat template (ChatML here; the model's own with `tokenizerDir`) shows the tools to the model
// and says how its calls are written; the provider reads them back in that format.
const provider = createTriton({ grpcUrl: triton.grpcUrl });
const tools = {
  get_weather: tool({
    description: 'The current weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `${city}: sunny, 21 C${scripted(`It is sunny and 21 C in ${city}.`)}`,
  }),
};

const result = await generateText({
  model: provider('tensorrt_llm_bls'),
  prompt: `What is the weather in Paris?${scripted(callWeather('Paris'))}`,
  tools,
  stopWhen: isStepCount(3),
});
for (const [i, step] of result.steps.entries()) {
  const calls = step.toolCalls.map((c) => `${c.toolName}(${JSON.stringify(c.input)})`);
  console.log(`step ${i + 1}: finish=${step.finishReason} calls=[${calls.join(', ')}]`);
}
console.log(`answer: ${result.text}`);

// Streamed: the call arrives as tool-input-start, its arguments in deltas, tool-input-end, then tool-call.
const stream = streamText({
  model: provider('tensorrt_llm_bls'),
  prompt: `And in Zürich?${scripted(callWeather('Zürich'))}`,
  tools,
});
const parts: string[] = [];
for await (const part of stream.fullStream) {
  if (part.type.startsWith('tool-input') || part.type === 'tool-call') parts.push(part.type);
}
console.log(`streamed: ${[...new Set(parts)].join(' > ')}`);

await provider.close();
await triton.close();
