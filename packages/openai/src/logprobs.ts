import type { TokenLogProbs } from './choices.js';
import type { ChatLogProbs, CompletionLogProbs } from './wire.js';

const encoder = new TextEncoder();

/**
 * Legacy completions log probs. TensorRT-LLM returns the log prob of the sampled token only, so
 * there each `top_logprobs` entry holds that one token (when `top` > 0); vLLM returns the `top`
 * most likely tokens of each position, and those are the entry. `offset` is where this piece
 * starts in the choice's text.
 */
export function completionLogProbs(lp: TokenLogProbs, top: number, offset: number): CompletionLogProbs {
  const text_offset: number[] = [];
  let at = offset;
  for (const token of lp.tokens) {
    text_offset.push(at);
    at += token.length;
  }
  return {
    tokens: [...lp.tokens],
    token_logprobs: [...lp.logProbs],
    top_logprobs: lp.tokens.map((token, i) => {
      if (top === 0) return {};
      const alternatives = lp.alternatives?.[i];
      if (alternatives === undefined) return { [token]: lp.logProbs[i]! };
      return Object.fromEntries(alternatives.slice(0, top).map((a) => [a.token, a.logProb]));
    }),
    text_offset,
  };
}

/** Chat log probs; as above, `top_logprobs` holds vLLM's alternatives, else the sampled token. */
export function chatLogProbs(lp: TokenLogProbs, top: number): ChatLogProbs {
  const entryOf = (token: string, logprob: number) => ({ token, logprob, bytes: [...encoder.encode(token)] });
  return {
    content: lp.tokens.map((token, i) => {
      const entry = entryOf(token, lp.logProbs[i]!);
      const alternatives = lp.alternatives?.[i];
      if (top === 0) return { ...entry, top_logprobs: [] };
      if (alternatives === undefined) return { ...entry, top_logprobs: [entry] };
      return { ...entry, top_logprobs: alternatives.slice(0, top).map((a) => entryOf(a.token, a.logProb)) };
    }),
    refusal: null,
  };
}
