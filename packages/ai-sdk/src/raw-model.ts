import { type ModelSchema, type Tokenizer, TritonLlmError } from '@trtllm/sdk';

/**
 * Refuses the raw `tensorrt_llm` model (token ids in and out) when the provider has no tokenizer,
 * naming the provider's setting: the SDK would refuse the prompt with its own step (`create
 * TritonLlm with a tokenizer`), which an AI SDK user never took (issue 53). Checked before
 * anything is sent; the caller's call (`generateText on 'x' failed: `) leads the message.
 */
export function requireTokenizer(schema: ModelSchema, tokenizer: Tokenizer | undefined): void {
  if (schema.flavor !== 'tensorrt_llm' || tokenizer !== undefined) return;
  throw new TritonLlmError(
    'failed_precondition',
    'the raw tensorrt_llm model takes and returns token ids, and this provider has no tokenizer to turn ' +
      "text into them: give tokenizerDir (the model's Hugging Face tokenizer directory, with its tokenizer.json) " +
      `to createTriton, or to triton('${schema.model}', { tokenizerDir })`,
    { model: schema.model },
  );
}
