import type {
  EarlyStopReport,
  FinishReason,
  GenerateResult,
  Logits,
  PerfMetrics,
  SequenceResult,
  Timings,
} from '../result.js';

/** What a generation knows when it ends, for its result. */
export interface ResultParts {
  readonly requestId: string;
  readonly model: string;
  readonly sequences: SequenceResult[];
  /** The finish reason an early end gives, for a request whose first sequence gives none. */
  readonly earlyFinish: FinishReason | undefined;
  readonly promptTokens: number | undefined;
  readonly timings: Timings;
  readonly contextLogits: Logits | undefined;
  readonly perfMetrics: PerfMetrics | undefined;
  readonly earlyStop: EarlyStopReport | undefined;
}

/** The result of a generation: the first sequence's text and finish reason, usage and timings. */
export function generationResult(parts: ResultParts): GenerateResult {
  const { sequences, promptTokens, contextLogits, perfMetrics, earlyStop } = parts;
  const first = sequences[0];
  const completionTokens = totalTokens(sequences);
  return {
    requestId: parts.requestId,
    model: parts.model,
    text: first?.text ?? '',
    finishReason: first?.finishReason ?? parts.earlyFinish ?? 'stop',
    sequences,
    usage: {
      ...(promptTokens !== undefined ? { promptTokens } : {}),
      ...(completionTokens !== undefined ? { completionTokens } : {}),
    },
    timings: parts.timings,
    ...(contextLogits !== undefined ? { contextLogits } : {}),
    ...(perfMetrics !== undefined ? { perfMetrics } : {}),
    ...(earlyStop !== undefined ? { earlyStop } : {}),
  };
}

/** The tokens of all sequences (0 when none arrived), when every one of them has a known count. */
function totalTokens(sequences: readonly SequenceResult[]): number | undefined {
  let total = 0;
  for (const s of sequences) {
    if (s.tokenCount === undefined) return undefined;
    total += s.tokenCount;
  }
  return total;
}
