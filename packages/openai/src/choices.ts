import type {
  FinishReason,
  GenerateRequest,
  GenerateResult,
  ImageInput,
  Tokenizer,
  TritonLlm,
} from '@trtllm/sdk';
import { tritonRequestId } from './ids.js';
import type { SamplingRequest } from './params.js';
import type { OpenAiFinishReason, OpenAiUsage } from './wire.js';

/** One prompt as the SDK takes it: text (with the images of a chat's `image_url` parts), or token ids for the raw model. */
export type PromptInput =
  | { readonly prompt: string; readonly images?: readonly ImageInput[] }
  | { readonly inputIds: readonly number[] };

/**
 * One upstream request. With `num_return_sequences` it yields several choices (its sequence k is
 * choice `firstChoice + k`); otherwise each choice is a request of its own.
 */
export interface ChoiceJob {
  readonly request: GenerateRequest & { readonly requestId: string };
  readonly prompt: PromptInput;
  readonly firstChoice: number;
  readonly choiceCount: number;
  /** The one job per prompt whose prompt tokens count in `usage` (OpenAI counts a prompt once, whatever `n`). */
  readonly countsPrompt: boolean;
}

/** One finished choice. */
export interface ChoiceOutcome {
  readonly index: number;
  readonly text: string;
  readonly finishReason: OpenAiFinishReason;
  readonly logProbs?: TokenLogProbs;
}

/** Per-token log probs with the token's text ('' where the backend does not say which text a token was). */
export interface TokenLogProbs {
  readonly tokens: readonly string[];
  readonly logProbs: readonly number[];
  /** The most likely tokens of each position, by rank, where the model returns them (vLLM). */
  readonly alternatives?: readonly (readonly TokenAlternative[])[];
}

/** One of the most likely tokens at a position. */
export interface TokenAlternative {
  readonly token: string;
  readonly logProb: number;
}

/** The sampled tokens' texts as the server decoded them (vLLM, which returns no ids), when it did. */
export function serverTexts(
  tokens: readonly { readonly token: string }[] | undefined,
  count: number,
): string[] | undefined {
  return tokens !== undefined && tokens.length === count ? tokens.map((t) => t.token) : undefined;
}

/** The alternatives of each position, from the SDK's `topLogProbs`. */
export function alternativesOf(
  top: readonly (readonly { readonly token: string; readonly logProb: number }[])[] | undefined,
): { alternatives?: TokenAlternative[][] } {
  if (top === undefined) return {};
  return { alternatives: top.map((at) => at.map((t) => ({ token: t.token, logProb: t.logProb }))) };
}

/** What a streamed set of choices emits, in order, ending with `usage`. */
export type ChoiceEvent =
  | {
      readonly type: 'delta';
      readonly choice: number;
      readonly text: string;
      readonly logProbs?: TokenLogProbs;
    }
  | { readonly type: 'finish'; readonly choice: number; readonly finishReason: OpenAiFinishReason }
  | { readonly type: 'usage'; readonly usage: OpenAiUsage };

/** What the choice runner needs besides the requests. */
export interface ChoiceContext {
  readonly llm: TritonLlm;
  readonly tokenizer: Tokenizer | undefined;
  readonly signal: AbortSignal;
}

/**
 * OpenAI has only `stop` and `length`. An early end asked for by the client (`stopped`,
 * `cancelled`) and a model that does not say (`unknown`) are reported as `stop`.
 */
export function openAiFinishReason(reason: FinishReason): OpenAiFinishReason {
  return reason === 'length' ? 'length' : 'stop';
}

/** Splits prompts times `n` into upstream requests, using `num_return_sequences` where the model has it. */
export async function planJobs(
  llm: TritonLlm,
  prompts: readonly PromptInput[],
  n: number,
  sampling: SamplingRequest,
  signal: AbortSignal,
): Promise<ChoiceJob[]> {
  const schema = await llm.schema({ signal });
  const together = n > 1 && schema.inputs.has('num_return_sequences');
  const jobs: ChoiceJob[] = [];
  prompts.forEach((prompt, p) => {
    const base = p * n;
    if (together || n === 1) {
      const request = {
        ...sampling,
        ...prompt,
        ...(n > 1 ? { numReturnSequences: n } : {}),
        requestId: tritonRequestId(),
      };
      jobs.push({ request, prompt, firstChoice: base, choiceCount: n, countsPrompt: true });
      return;
    }
    for (let k = 0; k < n; k++) {
      const request = { ...sampling, ...prompt, requestId: tritonRequestId() };
      jobs.push({ request, prompt, firstChoice: base + k, choiceCount: 1, countsPrompt: k === 0 });
    }
  });
  return jobs;
}

export function promptTokens(
  job: ChoiceJob,
  reported: number | undefined,
  tokenizer: Tokenizer | undefined,
): number {
  if (!job.countsPrompt) return 0;
  if (reported !== undefined) return reported;
  if ('inputIds' in job.prompt) return job.prompt.inputIds.length;
  // Ensembles before the 2026 backend do not report prompt length; a local tokenizer can count it.
  return tokenizer?.encode(job.prompt.prompt).length ?? 0;
}

/**
 * Generated tokens of a result. Models that report no counts (the LLM-API model; non-streamed
 * text from several sequences) leave a sequence with text but no tokens: a local tokenizer can
 * count its text instead.
 */
export function completionTokens(result: GenerateResult, tokenizer: Tokenizer | undefined): number {
  return result.sequences.reduce((n, s) => {
    if (s.tokenCount !== undefined || tokenizer === undefined) return n + (s.tokenCount ?? 0);
    return n + tokenizer.encode(s.text).length;
  }, 0);
}

export function usageOf(parts: readonly { prompt: number; completion: number }[]): OpenAiUsage {
  const prompt = parts.reduce((a, p) => a + p.prompt, 0);
  const completion = parts.reduce((a, p) => a + p.completion, 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The text of each token, where ids and a tokenizer make it known. */
export function tokenTexts(
  ids: readonly number[],
  count: number,
  tokenizer: Tokenizer | undefined,
  fallback: string | undefined,
): string[] {
  if (tokenizer !== undefined && ids.length === count) return ids.map((id) => tokenizer.decode([id]));
  // One log prob per streamed piece of text: that text is the token's.
  if (count === 1 && fallback !== undefined) return [fallback];
  return new Array<string>(count).fill('');
}

/** Runs every job to its end and returns the choices in index order, with the usage. */
export async function generateChoices(
  ctx: ChoiceContext,
  jobs: readonly ChoiceJob[],
): Promise<{ choices: ChoiceOutcome[]; usage: OpenAiUsage }> {
  // One failing job fails the response; the others are not left running.
  const inner = linkedController(ctx.signal);
  try {
    const results = await Promise.all(
      jobs.map((job) =>
        ctx.llm.generate(job.request, { signal: inner.signal }).catch((err: unknown) => {
          inner.abort();
          throw err;
        }),
      ),
    );
    const choices: ChoiceOutcome[] = [];
    jobs.forEach((job, j) => {
      const result = results[j]!;
      for (let k = 0; k < job.choiceCount; k++) choices.push(choiceOf(job, k, result, ctx.tokenizer));
    });
    choices.sort((a, b) => a.index - b.index);
    const usage = usageOf(
      jobs.map((job, j) => ({
        prompt: promptTokens(job, results[j]!.usage.promptTokens, ctx.tokenizer),
        completion: completionTokens(results[j]!, ctx.tokenizer),
      })),
    );
    return { choices, usage };
  } finally {
    inner.dispose();
  }
}

function choiceOf(
  job: ChoiceJob,
  k: number,
  result: GenerateResult,
  tokenizer: Tokenizer | undefined,
): ChoiceOutcome {
  const seq = result.sequences.find((s) => s.index === k);
  const index = job.firstChoice + k;
  if (seq === undefined) {
    // A sequence that produced no response at all ended at once: an empty choice.
    return { index, text: '', finishReason: openAiFinishReason(result.finishReason) };
  }
  const logProbs =
    seq.logProbs !== undefined
      ? {
          tokens:
            serverTexts(seq.logProbTokens, seq.logProbs.length) ??
            tokenTexts(seq.tokenIds, seq.logProbs.length, tokenizer, undefined),
          logProbs: seq.logProbs,
          ...alternativesOf(seq.topLogProbs),
        }
      : undefined;
  return {
    index,
    text: seq.text,
    finishReason: openAiFinishReason(seq.finishReason),
    ...(logProbs !== undefined ? { logProbs } : {}),
  };
}

/** An AbortController that also aborts when `outer` does (AbortSignal.any needs Node 20.3). */
export function linkedController(outer: AbortSignal): AbortController & { dispose(): void } {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(outer.reason);
  if (outer.aborted) controller.abort(outer.reason);
  else outer.addEventListener('abort', onAbort, { once: true });
  return Object.assign(controller, { dispose: () => outer.removeEventListener('abort', onAbort) });
}
