import type {
  JSONObject,
  LanguageModelV4FinishReason,
  LanguageModelV4Usage,
  SharedV4ProviderMetadata,
} from '@ai-sdk/provider';
import type { EarlyStopReport, FinishReason, GenerateResult, Tokenizer } from '@trtllm/sdk';

/** The key of this provider's options and metadata. */
export const PROVIDER_KEY = 'trtllm';

/**
 * The SDK's finish reason as the AI SDK's: `stop` and `length` carry over; an early end the client
 * asked for (`stopped`, `cancelled`) and a model that does not say (`unknown`) are `other`, with
 * the SDK's reason kept as the raw one. A model that stopped after making tool calls stopped to
 * have them run: `tool-calls`.
 */
export function finishReason(reason: FinishReason, called = false): LanguageModelV4FinishReason {
  if (called && reason === 'stop') return { unified: 'tool-calls', raw: reason };
  const unified = reason === 'stop' || reason === 'length' || reason === 'error' ? reason : 'other';
  return { unified, raw: reason };
}

/**
 * Token counts. The prompt count comes from the model where it reports one, else from the local
 * tokenizer when there is one; generated tokens are counted over every sequence, as TensorRT-LLM
 * bills them.
 */
export function usageOf(
  result: GenerateResult | undefined,
  prompt: string,
  tokenizer: Tokenizer | undefined,
): LanguageModelV4Usage {
  const input = result?.usage.promptTokens ?? tokenizer?.encode(prompt).length;
  const output = result?.usage.completionTokens;
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
    ...(result !== undefined
      ? {
          raw: {
            completionTokens: result.usage.completionTokens,
            ...(result.usage.promptTokens !== undefined ? { promptTokens: result.usage.promptTokens } : {}),
          },
        }
      : {}),
  };
}

/** An early-stop report as JSON metadata. */
export function earlyStopJson(report: EarlyStopReport): JSONObject {
  return {
    trigger: report.trigger,
    serverTold: report.serverTold,
    via: [...report.via],
    serverStopsGenerating: report.serverStopsGenerating,
  };
}

/**
 * What the AI SDK has no field for, under `providerMetadata.trtllm`: the Triton request id, the
 * SDK's own finish reason, client-measured timings, every sequence when there are several (beams,
 * `numReturnSequences`), the backend's metrics, and the early-stop report that says whether the
 * server really stopped generating.
 */
export function providerMetadata(result: GenerateResult): SharedV4ProviderMetadata {
  const meta: JSONObject = {
    requestId: result.requestId,
    model: result.model,
    finishReason: result.finishReason,
    timings: {
      ...(result.timings.timeToFirstTokenMs !== undefined
        ? { timeToFirstTokenMs: result.timings.timeToFirstTokenMs }
        : {}),
      totalMs: result.timings.totalMs,
    },
    lossy: result.sequences.some((s) => s.lossy),
  };
  if (result.earlyStop !== undefined) meta.earlyStop = earlyStopJson(result.earlyStop);
  if (result.sequences.length > 1 || result.sequences.some((s) => s.logProbs !== undefined)) {
    meta.sequences = result.sequences.map((s) => ({
      index: s.index,
      text: s.text,
      finishReason: s.finishReason,
      tokenCount: s.tokenCount,
      ...(s.cumLogProb !== undefined ? { cumLogProb: s.cumLogProb } : {}),
      ...(s.logProbs !== undefined ? { logProbs: [...s.logProbs] } : {}),
      ...(s.stopReason !== undefined ? { stopReason: s.stopReason } : {}),
    }));
  }
  if (result.perfMetrics !== undefined) {
    // Nanosecond timestamps are bigints, which JSON cannot hold: they travel as decimal strings.
    meta.perfMetrics = Object.fromEntries(
      Object.entries(result.perfMetrics).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v]),
    ) as JSONObject;
  }
  return { [PROVIDER_KEY]: meta };
}
