// A LangChain agent straight on Triton: createAgent from `langchain` with ChatTriton and a tool. The
// model calls the tool, the agent runs it and hands the ToolMessage back, and the model answers from
// it; bindTools shows the streamed tool_call_chunks. No OpenAI-compatible server in between.
import type { AIMessageChunk } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatTriton } from '@trtllm/langchain';
import { fakeScript } from '@trtllm/testing';
import { createAgent } from 'langchain';
import { z } from 'zod';
import { server } from './_server.js';

const triton = await server();
// On the embedded fake Triton, a marker in the prompt scripts each reply: a Qwen-style <tool_call>
// first, then the answer (carried in the tool's result). A real model writes its own.
const onFake = !(process.env.TRITON_GRPC_URL && process.env.TRITON_HTTP_URL);
const scripted = (reply: string): string => (onFake ? ` ${fakeScript(reply)}` : '');
const callWeather = (city: string): string =>
  `<tool_call>\n${JSON.stringify({ name: 'get_weather', arguments: { city } })}\n</tool_call>`;

const getWeather = tool(
  async ({ city }) => `${city}: sunny, 21 C${scripted(`It is sunny and 21 C in ${city}.`)}`,
  {
    name: 'get_weather',
    description: 'The current weather in a city',
    schema: z.object({ city: z.string() }),
  },
);
// The chat template (ChatML here; the model's own with `tokenizerDir`) shows the tools to the model
// and says how its calls are written; ChatTriton reads them back in that format.
const model = new ChatTriton({ httpUrl: triton.httpUrl, model: 'tensorrt_llm_bls', maxTokens: 256 });

const agent = createAgent({ model, tools: [getWeather] });
const { messages } = await agent.invoke({
  messages: [{ role: 'user', content: `What is the weather in Paris?${scripted(callWeather('Paris'))}` }],
});
for (const m of messages) {
  const calls = (m as AIMessageChunk).tool_calls ?? [];
  const text = typeof m.content === 'string' ? m.content.replace(/ ?\[\[fake-script:[^\]]*\]\]/g, '') : '';
  console.log(
    `${m.getType()}: ${calls.length > 0 ? calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(', ') : text}`,
  );
}

// Streamed: the call arrives as tool_call_chunks, which LangChain merges back into tool_calls.
let merged: AIMessageChunk | undefined;
let chunks = 0;
for await (const chunk of await model
  .bindTools([getWeather])
  .stream(`And in Zürich?${scripted(callWeather('Zürich'))}`)) {
  chunks += chunk.tool_call_chunks?.length ?? 0;
  merged = merged?.concat(chunk) ?? chunk;
}
console.log(
  `streamed: ${chunks} tool_call_chunks -> ${JSON.stringify(merged?.tool_calls?.map((c) => [c.name, c.args]))}`,
);

await model.close();
await triton.close();
