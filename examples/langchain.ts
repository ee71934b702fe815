// LangChain.js: a prompt template piped into ChatTriton and streamed, tokens also seen by a callback;
// then a stream of the raw model ended with an AbortSignal, whose report reaches the callbacks.
import { ModelAbortError } from '@langchain/core/errors';
import type { UsageMetadata } from '@langchain/core/messages';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { ChatTriton, type TritonResponseMetadata } from '@trtllm/langchain';
import { fakeTokenizer } from '@trtllm/testing';
import { server } from './_server.js';

const triton = await server({ itlMs: 10 });
const model = new ChatTriton({ grpcUrl: triton.grpcUrl, model: 'tensorrt_llm_bls', maxTokens: 14 });
const prompt = ChatPromptTemplate.fromMessages([
  ['system', 'You answer in one sentence.'],
  ['human', 'What is {topic}?'],
]);
const chain = prompt.pipe(model);

let tokens = 0;
const stream = await chain.stream(
  { topic: 'statistics' },
  { callbacks: [{ handleLLMNewToken: () => void tokens++ }] },
);
for await (const chunk of stream) {
  process.stdout.write(chunk.text);
  // The last chunk carries the finish reason and the token counts. (The cast is only needed under
  // exactOptionalPropertyTypes, where @langchain/core 1.4 infers usage_metadata as undefined.)
  const usage = chunk.usage_metadata as UsageMetadata | undefined;
  if (usage !== undefined) {
    console.log(
      `\nfinish=${chunk.response_metadata.finish_reason} output tokens=${usage.output_tokens} callback tokens=${tokens}`,
    );
  }
}

// Against a real deployment, load the model's tokenizer: `tokenizerDir: '/models/llama/tokenizer'`.
const raw = new ChatTriton({
  grpcUrl: triton.grpcUrl,
  model: 'tensorrt_llm',
  tokenizer: fakeTokenizer,
  maxTokens: 3000,
});
const controller = new AbortController();
const reported = new Promise<unknown>((resolve) => {
  void (async () => {
    const rawStream = await raw.stream('What is ML?', {
      signal: controller.signal,
      // LangChain may also report its own AbortError; the SDK's report is in the ModelAbortError.
      callbacks: [{ handleLLMError: (e: unknown) => ModelAbortError.isInstance(e) && resolve(e) }],
    });
    setTimeout(() => controller.abort(), 100);
    try {
      for await (const _ of rawStream);
    } catch (err) {
      console.log(`the stream ended with ${(err as Error).name}`);
    }
  })();
});
const err = await reported;
if (ModelAbortError.isInstance(err)) {
  // The partial reply's metadata is ChatTriton's (TritonResponseMetadata), with the SDK's early-stop report.
  const metadata = err.partialOutput?.response_metadata as TritonResponseMetadata | undefined;
  const report = metadata?.early_stop;
  const usage = err.partialOutput?.usage_metadata as UsageMetadata | undefined;
  console.log(
    `aborted after ${usage?.output_tokens} tokens: server told via ${report?.via.join(' + ')}, ` +
      `server stops generating: ${report?.serverStopsGenerating}`,
  );
}
await model.close();
await raw.close();
await triton.close();
