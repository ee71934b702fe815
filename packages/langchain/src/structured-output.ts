import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import {
  assembleStructuredOutputPipeline,
  createContentParser,
} from '@langchain/core/language_models/structured_output';
import type { BaseMessage } from '@langchain/core/messages';
import type { Runnable } from '@langchain/core/runnables';
import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { isSerializableSchema } from '@langchain/core/utils/standard_schema';
import { isInteropZodSchema } from '@langchain/core/utils/types';
import type { GenerateRequest } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';

type AnyRecord = Record<string, unknown>;

/** What `withStructuredOutput` needs of the model: a copy bound to call options. */
interface Bindable {
  withConfig(config: {
    guidedDecoding: NonNullable<GenerateRequest['guidedDecoding']>;
  }): Runnable<BaseLanguageModelInput, BaseMessage>;
}

/**
 * The model bound to the deployed model's guided decoding, piped into LangChain's parser for the
 * schema. `jsonSchema` (default) constrains the output to the schema; `jsonMode` to any JSON
 * object. There is no tool calling, so `functionCalling` is refused; so is a model without guided
 * decoding, by the SDK, naming `guidedDecoding`, before anything is sent.
 */
export function structuredOutput(
  model: Bindable,
  schema: unknown,
  config: { readonly method?: string; readonly includeRaw?: boolean; readonly strict?: boolean } | undefined,
):
  | Runnable<BaseLanguageModelInput, AnyRecord>
  | Runnable<BaseLanguageModelInput, { raw: BaseMessage; parsed: AnyRecord }> {
  const method = config?.method ?? 'jsonSchema';
  if (method !== 'jsonSchema' && method !== 'jsonMode') {
    throw invalidArgument(
      'method',
      method,
      "must be 'jsonSchema' or 'jsonMode' (the model has guided decoding, not tool calling)",
    );
  }
  if (schema === null || typeof schema !== 'object') {
    throw invalidArgument(
      'schema',
      schema,
      'must be a zod schema, a Standard Schema or a JSON schema object',
    );
  }
  const jsonSchema =
    isInteropZodSchema(schema) || isSerializableSchema(schema) ? toJsonSchema(schema) : (schema as AnyRecord);
  const guidedDecoding =
    method === 'jsonMode' ? { type: 'json' } : { type: 'json_schema', guide: JSON.stringify(jsonSchema) };
  const parser = createContentParser<AnyRecord>(schema as AnyRecord);
  return assembleStructuredOutputPipeline<AnyRecord>(
    model.withConfig({ guidedDecoding }),
    parser,
    config?.includeRaw,
    config?.includeRaw === true ? 'StructuredOutputRunnable' : 'StructuredOutput',
  );
}
