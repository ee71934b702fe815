import type { TokenLogProbs } from './choices.js';
import type { ChatLogProbs, CompletionLogProbs } from './wire.js';

const encoder = new TextEncoder();

/**
 * Legacy completions log probs. TensorRT-LLM returns the log prob of the sampled token only, so
 * each `top_logprobs` entry holds that one token (when `top` > 0), never alternatives.
 * `offset` is where this piece starts in the choice's text.
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
    top_logprobs: lp.tokens.map((token, i) => (top > 0 ? { [token]: lp.logProbs[i]! } : {})),
    text_offset,
  };
}

/** Chat log probs; as above, `top_logprobs` can only ever hold the sampled token. */
export function chatLogProbs(lp: TokenLogProbs, top: number): ChatLogProbs {
  return {
    content: lp.tokens.map((token, i) => {
      const entry = { token, logprob: lp.logProbs[i]!, bytes: [...encoder.encode(token)] };
      return { ...entry, top_logprobs: top > 0 ? [entry] : [] };
    }),
    refusal: null,
  };
}
