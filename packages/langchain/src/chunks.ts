import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { AIMessageChunk, type AIMessageChunkFields, type UsageMetadata } from '@langchain/core/messages';
import { ChatGenerationChunk } from '@langchain/core/outputs';
import type { GenerateResult } from '@trtllm/sdk';
import { responseMetadata, type TritonResponseMetadata, usageMetadata } from './metadata.js';

/**
 * Message fields with usage. Under `exactOptionalPropertyTypes` @langchain/core 1.4's inferred
 * `usage_metadata` type collapses to `undefined`, so the fields are typed here once.
 */
export function messageFields(
  content: string,
  metadata: TritonResponseMetadata,
  usage: UsageMetadata | undefined,
): AIMessageChunkFields {
  const fields = {
    content,
    response_metadata: { ...metadata },
    ...(usage !== undefined ? { usage_metadata: usage } : {}),
  };
  return fields as unknown as AIMessageChunkFields;
}

/** A streamed piece of text. */
export function deltaChunk(text: string): ChatGenerationChunk {
  return new ChatGenerationChunk({ text, message: new AIMessageChunk({ content: text }) });
}

/** The last streamed chunk: no text, the request's usage and response metadata. */
export function finalChunk(
  result: GenerateResult,
  countPrompt: () => number | undefined,
): ChatGenerationChunk {
  const metadata = responseMetadata(result);
  return new ChatGenerationChunk({
    text: '',
    message: new AIMessageChunk(messageFields('', metadata, usageMetadata(result, countPrompt))),
    generationInfo: { finish_reason: metadata.finish_reason },
  });
}

/** Hands a delta to the callbacks' `handleLLMNewToken`, with the chunk as LangChain's own models do. */
export async function tokenCallback(
  runManager: CallbackManagerForLLMRun | undefined,
  chunk: ChatGenerationChunk,
): Promise<void> {
  await runManager?.handleLLMNewToken(
    chunk.text,
    { prompt: 0, completion: 0 },
    undefined,
    undefined,
    undefined,
    {
      chunk,
    },
  );
}
