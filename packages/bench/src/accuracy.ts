import { l as rougeLScore } from 'js-rouge';

/** How closely the generated outputs of a level match the expected ones. */
export interface AccuracyReport {
  /** Successful requests whose prompt had an expected output. */
  readonly scored: number;
  /** Share of those whose output equals the expected one after trimming surrounding whitespace (0..1). */
  readonly exactMatch: number;
  /** Mean ROUGE-L F1 (longest common subsequence of words, case-insensitive) over those requests (0..1). */
  readonly rougeL: number;
}

/** Whether the output is the expected text, ignoring leading and trailing whitespace. */
export function exactMatch(output: string, expected: string): boolean {
  return output.trim() === expected.trim();
}

/**
 * ROUGE-L F1 of `output` against `expected` (js-rouge: summary-level LCS over words, compared
 * case-insensitively as most evaluation harnesses do). An empty side scores 0, or 1 when both are empty.
 */
export function rougeL(output: string, expected: string): number {
  const a = output.trim();
  const b = expected.trim();
  if (a.length === 0 || b.length === 0) return a.length === b.length ? 1 : 0;
  return rougeLScore(a, b, { caseSensitive: false });
}

/** Scores pairs of generated and expected outputs; `undefined` when no pair was scored. */
export function scoreAccuracy(
  pairs: readonly { readonly output: string; readonly expected: string }[],
): AccuracyReport | undefined {
  if (pairs.length === 0) return undefined;
  let exact = 0;
  let rouge = 0;
  for (const { output, expected } of pairs) {
    if (exactMatch(output, expected)) exact += 1;
    rouge += rougeL(output, expected);
  }
  return { scored: pairs.length, exactMatch: exact / pairs.length, rougeL: rouge / pairs.length };
}
