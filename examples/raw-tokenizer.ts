// The raw tensorrt_llm model from text: the client tokenizes the prompt and stop words, streams ids
// and turns them into exact text (no U+FFFD for characters split across tokens).
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { fakeTokenizer } from '@trtllm/testing';
import { server } from './_server.js';

const triton = await server();
// With a real deployment: `const tokenizer = await loadTokenizer('/models/llama/tokenizer')` (@trtllm/tokenizers).
const llm = new TritonLlm({
  transport: grpcTransport({ baseUrl: triton.grpcUrl }),
  model: 'tensorrt_llm',
  tokenizer: fakeTokenizer,
});
let text = '';
for await (const chunk of llm.stream({ prompt: 'What is ML?', maxTokens: 60, stopWords: [' Models'] })) {
  if (!chunk.done) text += chunk.text;
  else
    console.log(
      `${JSON.stringify(text)}\nfinish=${chunk.finishReason}, replacement characters: ${text.includes('\uFFFD')}`,
    );
}
await llm.close();
await triton.close();
