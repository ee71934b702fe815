import { type ModelSchema, type Tokenizer, TritonLlmError } from '@trtllm/sdk';

/**
 * Refuses the raw `tensorrt_llm` model (token ids in and out) when the chat model has no tokenizer,
 * naming its setting: the SDK would refuse the prompt with its own step (`create TritonLlm with a
 * tokenizer`), which a LangChain user never took (issue 53). Checked before anything is sent; the
 * caller's call (`ChatTriton.invoke on 'x' failed: `) leads the message.
 */
export function requireTokenizer(schema: ModelSchema, tokenizer: Tokenizer | undefined): void {
  if (schema.flavor !== 'tensorrt_llm' || tokenizer !== undefined) return;
  throw new TritonLlmError(
    'failed_precondition',
    'the raw tensorrt_llm model takes and returns token ids, and this chat model has no tokenizer to turn ' +
      "text into them: give new ChatTriton({ tokenizerDir }) the model's Hugging Face tokenizer directory, " +
      'with its tokenizer.json',
    { model: schema.model },
  );
}
