import type { UsageMetadata } from '@langchain/core/messages';
import type { EarlyStopReport, FinishReason, GenerateResult, SequenceResult } from '@trtllm/sdk';

/**
 * What {@link ChatTriton} puts in `response_metadata` of its messages (the last streamed chunk, or
 * the message of `invoke`): the finish reason, the SDK's early-stop report when the request was ended
 * early (whether the server was told and whether it stops generating: see the SDK README's
 * "Ending a request early"), the request id to find the request in the server's logs, and the
 * client-measured timings.
 */
export interface TritonResponseMetadata {
  readonly model_provider: 'triton';
  readonly model_name: string;
  readonly request_id: string;
  readonly finish_reason: FinishReason;
  /** Present when the request was ended early (abort, a stop string, a timeout). */
  readonly early_stop?: EarlyStopReport;
  readonly time_to_first_token_ms?: number;
  readonly total_ms: number;
}

/** Response metadata of `result` (of one of its sequences when given). */
export function responseMetadata(result: GenerateResult, sequence?: SequenceResult): TritonResponseMetadata {
  const ttft = result.timings.timeToFirstTokenMs;
  return {
    model_provider: 'triton',
    model_name: result.model,
    request_id: result.requestId,
    finish_reason: (sequence ?? result).finishReason,
    ...(result.earlyStop !== undefined ? { early_stop: result.earlyStop } : {}),
    ...(ttft !== undefined ? { time_to_first_token_ms: ttft } : {}),
    total_ms: result.timings.totalMs,
  };
}

/**
 * Token counts in LangChain's shape. Prompt tokens come from the server where the model reports them,
 * else from the client's tokenizer; without either they are 0 (LangChain's type has no "unknown").
 */
export function usageMetadata(result: GenerateResult, countPrompt: () => number | undefined): UsageMetadata {
  const input = result.usage.promptTokens ?? countPrompt() ?? 0;
  const output = result.usage.completionTokens ?? 0;
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}
