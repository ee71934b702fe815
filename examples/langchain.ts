// LangChain.js: a prompt template piped into ChatTriton and streamed, tokens also seen by a callback;
// then a stream of the raw model ended with an AbortSignal, whose report reaches the callbacks.
import { ModelAbortError } from '@langchain/core/errors';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { ChatTriton } from '@trtllm/langchain';
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
  if (chunk.response_metadata.finish_reason !== undefined) {
    console.log(
      `\nfinish=${chunk.response_metadata.finish_reason} output tokens=${chunk.usage_metadata?.output_tokens} ` +
        `callback tokens=${tokens}`,
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
  const report = err.partialOutput?.response_metadata.early_stop as
    | { via: string[]; serverStopsGenerating: boolean }
    | undefined;
  console.log(
    `aborted after ${err.partialOutput?.usage_metadata?.output_tokens} tokens: server told via ${report?.via.join(' + ')}, ` +
      `server stops generating: ${report?.serverStopsGenerating}`,
  );
}
await model.close();
await raw.close();
await triton.close();
