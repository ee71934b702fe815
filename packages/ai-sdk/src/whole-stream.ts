import type {
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { type GenerateResult, TritonLlmError } from '@trtllm/sdk';
import type { Prepared } from './language-model.js';
import { wholeGenerationWarning } from './lossy-text.js';
import { earlyStopJson, finishReason, PROVIDER_KEY, providerMetadata, usageOf } from './result.js';
import { StreamParts } from './tools.js';

/** What {@link wholeStream} needs of its model. */
export interface WholeStreamContext {
  readonly modelId: string;
  readonly abortSignal: AbortSignal | undefined;
  /** Where model output that looked like a call but was not one is reported. */
  readonly warn: (message: string) => void;
  /** The parts that end the stream when the generation fails. */
  readonly failure: (err: unknown, requestId: string | undefined) => LanguageModelV4StreamPart[];
}

/**
 * A streamed call that needs the exact text (tools, JSON) on a model whose streamed text is lossy:
 * generated whole (the server decodes all tokens at once), then handed out as the same parts a
 * stream has, at once, after a warning that says why and how to stream it instead.
 */
export function wholeStream(call: Prepared, context: WholeStreamContext): LanguageModelV4StreamResult {
  const controller = new AbortController();
  const outer = context.abortSignal;
  const onAbort = (): void => controller.abort(outer?.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener('abort', onAbort, { once: true });
  const warnings = [
    ...call.warnings,
    { type: 'other' as const, message: wholeGenerationWarning(context.modelId) },
  ];
  let cancelled = false;
  const stream = new ReadableStream<LanguageModelV4StreamPart>({
    start: (out) => {
      out.enqueue({ type: 'stream-start', warnings });
    },
    pull: async (out) => {
      let parts: LanguageModelV4StreamPart[];
      try {
        const result = await call.llm.generate(call.request, { ...call.options, signal: controller.signal });
        parts = wholeParts(result, call, context);
      } catch (err) {
        parts = context.failure(err, call.request.requestId);
      } finally {
        outer?.removeEventListener('abort', onAbort);
      }
      if (cancelled) return;
      for (const part of parts) out.enqueue(part);
      out.close();
    },
    cancel: (reason) => {
      cancelled = true;
      controller.abort(reason);
      outer?.removeEventListener('abort', onAbort);
    },
  });
  return { stream, request: { body: call.request } };
}

/** A whole result as a stream's parts: metadata, the text and calls, the finish. */
function wholeParts(
  result: GenerateResult,
  call: Prepared,
  context: WholeStreamContext,
): LanguageModelV4StreamPart[] {
  const parts = new StreamParts(result.requestId, call.tools, (message) =>
    context.warn(`${result.requestId}: ${message}`),
  );
  const content = [...parts.push(result.text), ...parts.end()];
  const first = result.sequences.find((s) => s.index === 0);
  return [
    { type: 'response-metadata', id: result.requestId, modelId: context.modelId, timestamp: new Date() },
    ...content,
    {
      type: 'finish',
      finishReason: finishReason(first?.finishReason ?? result.finishReason, parts.called),
      usage: usageOf(result, call.prompt, call.tokenizer),
      providerMetadata: providerMetadata(result),
    },
  ];
}

/** The parts that end a streamed call that failed: the error, then a finish with the request id and early-stop report. */
export function failureParts(
  error: unknown,
  requestId: string | undefined,
  usage: LanguageModelV4Usage,
): LanguageModelV4StreamPart[] {
  const sdkError = error instanceof TritonLlmError ? error : undefined;
  const early = sdkError?.earlyStop;
  const id = requestId ?? sdkError?.requestId;
  return [
    { type: 'error', error },
    {
      type: 'finish',
      finishReason: { unified: 'error', raw: sdkError?.code },
      usage,
      providerMetadata: {
        [PROVIDER_KEY]: {
          ...(id !== undefined ? { requestId: id } : {}),
          ...(early !== undefined ? { earlyStop: earlyStopJson(early) } : {}),
        },
      },
    },
  ];
}
