import type { EarlyStopReport, SequenceResult, StreamChunk, TritonLlm } from '@trtllm/sdk';
import { encode, fakeTokenizer, type GeneratedSequence, generateTokens, tokenLogProb } from '@trtllm/testing';
import { expect } from 'vitest';

/**
 * The generator's tokens for a request to Triton's vLLM backend (GENERATOR.md), as the fake's `vllm`
 * model and the real Triton's stand-in (test/triton/fakegen/vllm_model.py) produce them.
 */
export function expectedVllm(
  prompt: string,
  options: { maxTokens: number; seed?: number },
): GeneratedSequence {
  return generateTokens(encode(prompt), options)[0]!;
}

/** Their text: vLLM shows no part of a character cut off at the end. */
export function vllmText(tokens: readonly number[]): string {
  return fakeTokenizer.decode(tokens).replace(/\uFFFD$/u, '');
}

/**
 * Generates `maxTokens` for `prompt` asking for log probs and the top 2 alternatives, and checks them
 * against the generator's tokens: the sequence, for what else a test checks.
 */
export async function generateTopTwoLogProbs(
  llm: TritonLlm,
  prompt: string,
  maxTokens: number,
): Promise<{ seq: SequenceResult; tokens: readonly number[] }> {
  const { tokens } = expectedVllm(prompt, { maxTokens });
  const result = await llm.generate({ prompt, maxTokens, returnLogProbs: true, topLogProbs: 2 });
  const seq = result.sequences[0]!;
  expectTopTwoLogProbs(seq, tokens);
  return { seq, tokens };
}

/** A sequence's log probs are the generator's for its tokens, each with the top-2 alternatives. */
function expectTopTwoLogProbs(seq: SequenceResult, tokens: readonly number[]): void {
  expect(seq.logProbs).toEqual(tokens.map(tokenLogProb));
  expect(seq.logProbTokens?.map((t) => t.tokenId)).toEqual(tokens);
  expect(seq.topLogProbs?.map((top) => top.map((t) => t.rank))).toEqual(tokens.map(() => [1, 2]));
}

/** Reads a stream to its end, aborting it once `afterTokens` tokens have come: its finish reason and report. */
export async function abortedAfter(
  stream: AsyncIterable<StreamChunk>,
  controller: AbortController,
  afterTokens: number,
): Promise<{ finishReason: string | undefined; report: EarlyStopReport | undefined }> {
  let report: EarlyStopReport | undefined;
  let finishReason: string | undefined;
  for await (const chunk of stream) {
    if (chunk.done) {
      finishReason = chunk.finishReason;
      report = chunk.result.earlyStop;
    } else if (chunk.totalTokens >= afterTokens) controller.abort();
  }
  return { finishReason, report };
}
