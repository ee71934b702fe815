import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { AIMessage } from '@langchain/core/messages';
import type { ChatGenerationChunk, ChatResult } from '@langchain/core/outputs';
import {
  type GenerateOptions,
  type GenerateRequest,
  type GenerateResult,
  type TritonLlm,
  TritonLlmError,
} from '@trtllm/sdk';
import type { ToolCallPlan } from '@trtllm/tokenizers';
import { closeRun, drainAborted, type Run, throwIfAborted } from './abort.js';
import { deltaChunk, finalChunk, messageFields, tokenCallback } from './chunks.js';
import { lossyTextWarning, streamsLossyText, wholeGenerationWarning } from './lossy-text.js';
import { responseMetadata, usageMetadata } from './metadata.js';
import { ToolChunks, toolMessageParts } from './tools.js';

/** A request about to be sent, with what the response metadata needs to know of it. */
export interface Prepared {
  readonly llm: TritonLlm;
  readonly tools: ToolCallPlan | undefined;
  readonly request: GenerateRequest;
  readonly options: GenerateOptions;
  readonly countPrompt: () => number | undefined;
}

/** How a run hands out its text, and where it says what it had to do about lossy streamed text. */
interface RunMode {
  /** Whether the caller only wants the whole reply (invoke), not its text as it comes. */
  readonly whole: boolean;
  readonly warn: (message: string) => void;
}

/**
 * Yields the first sequence's text deltas and returns the whole result. Models that are not
 * decoupled, and requests for several sequences, are generated whole (`generate()`); the rest are
 * streamed, so callbacks see tokens as they arrive even under `invoke`. A model whose streamed text
 * is lossy (`ensemble`) is generated whole where exact text matters more than its pace: under
 * `invoke`, and for tool calls and structured output (a tool must never run with U+FFFD in its
 * arguments); its plain streamed text that lost characters is warned about once.
 */
export async function* runOf(prepared: Prepared, mode: RunMode): Run {
  const { llm, request, options } = prepared;
  const schema = await llm.schema(options.signal !== undefined ? { signal: options.signal } : {});
  const several = (request.beamWidth ?? 1) > 1 || (request.numReturnSequences ?? 1) > 1;
  if (!schema.decoupled || several) return await llm.generate(request, options);
  if (streamsLossyText(schema)) {
    const exact = prepared.tools !== undefined || request.guidedDecoding !== undefined;
    if (mode.whole) return await llm.generate(request, options);
    if (exact) {
      mode.warn(wholeGenerationWarning(llm.model));
      return await llm.generate(request, options);
    }
  }
  let warned = false;
  for await (const chunk of llm.stream(request, options)) {
    if (chunk.done) return chunk.result;
    if (chunk.lossy && !warned) {
      warned = true;
      mode.warn(lossyTextWarning(llm.model));
    }
    if (chunk.sequenceIndex === 0 && chunk.text !== '') yield chunk.text;
  }
  throw new TritonLlmError('protocol', `the stream of model '${llm.model}' ended without a final chunk`, {
    model: llm.model,
  });
}

/** Streams the reply: one chunk per text delta, then a last chunk with usage and response metadata. */
export async function* streamReply(
  prepared: Prepared,
  warn: (message: string) => void,
  runManager?: CallbackManagerForLLMRun,
): AsyncGenerator<ChatGenerationChunk> {
  const run = runOf(prepared, { whole: false, warn });
  const { signal } = prepared.options;
  // LangChain's stream() answers an abort at once with its own AbortError and never resumes this
  // generator. The request then still has to end (the SDK tells the server) and its report
  // reach the callbacks: whoever holds the generator when the signal fires finishes the run.
  let parked = false;
  let drained = false;
  const onAbort = () => {
    if (!parked) return;
    drained = true;
    void drainAborted(run, prepared.countPrompt, runManager);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const pieces = new ToolChunks(prepared.tools, warn);
  try {
    let streamed = false;
    for (;;) {
      const step = await run.next();
      if (step.done) {
        const result = step.value;
        throwIfAborted(result, prepared.countPrompt);
        // A model that is not decoupled answers once: its whole text is the only delta.
        const rest = !streamed && result.text !== '' ? pieces.push(result.text) : [];
        for (const chunk of [...rest, ...pieces.end()]) {
          yield chunk;
          await tokenCallback(runManager, chunk);
        }
        yield finalChunk(result, prepared.countPrompt);
        return;
      }
      streamed = true;
      // Text that arrives after the abort is not yielded: LangChain would answer it with its own
      // AbortError, and the SDK's report (the final result, due at once) would be lost.
      if (signal?.aborted) continue;
      for (const chunk of pieces.push(step.value)) {
        parked = true;
        yield chunk;
        parked = false;
        if (drained) return;
        await tokenCallback(runManager, chunk);
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    // Left early (the consumer broke out of the stream): end the request, which tells the server.
    if (!drained) await closeRun(run);
  }
}

/** The whole reply: one generation per returned sequence (beams, `numReturnSequences`). */
export async function wholeReply(
  prepared: Prepared,
  warn: (message: string) => void,
  runManager?: CallbackManagerForLLMRun,
): Promise<ChatResult> {
  const run = runOf(prepared, { whole: true, warn });
  let step: IteratorResult<string, GenerateResult>;
  try {
    step = await run.next();
    while (step.done !== true) {
      await tokenCallback(runManager, deltaChunk(step.value));
      step = await run.next();
    }
  } finally {
    // A callback that threw leaves the request running: end it.
    await closeRun(run);
  }
  const result = step.value;
  throwIfAborted(result, prepared.countPrompt);
  const usage = usageMetadata(result, prepared.countPrompt);
  const sequences = result.sequences.length > 0 ? result.sequences : [undefined];
  return {
    generations: sequences.map((sequence, i) => {
      const output = sequence?.text ?? result.text;
      const metadata = responseMetadata(result, sequence);
      const { content: text, toolCalls } =
        prepared.tools !== undefined
          ? toolMessageParts(prepared.tools, output, (m) => warn(`${result.requestId}: ${m}`))
          : { content: output, toolCalls: [] };
      const fields = messageFields(text, metadata, i === 0 ? usage : undefined);
      return {
        text,
        // The request's tokens, counted once: on the first sequence.
        message: new AIMessage(toolCalls.length > 0 ? { ...fields, tool_calls: toolCalls } : fields),
        generationInfo: { finish_reason: metadata.finish_reason },
      };
    }),
    llmOutput: {
      tokenUsage: {
        promptTokens: usage.input_tokens,
        completionTokens: usage.output_tokens,
        totalTokens: usage.total_tokens,
      },
    },
  };
}
