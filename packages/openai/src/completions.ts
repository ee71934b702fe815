import { invalidArgument } from '@trtllm/sdk/transport';
import { requireLogProbs, requireModel } from './capabilities.js';
import type { ChoiceOutcome, PromptInput } from './choices.js';
import { choiceTemplates } from './chunk-template.js';
import type { EndpointContext, EndpointFormat } from './endpoint.js';
import { responseId, unixSeconds } from './ids.js';
import { completionLogProbs } from './logprobs.js';
import { type Body, commonParams, optionalBoolean, optionalInteger, refuseNonEmpty } from './params.js';
import { COMPLETION_FIELDS, refuseUnknownFields } from './request-fields.js';
import { joinSse, NO_EVENTS, type SseText, sseEvent } from './sse.js';
import type { OpenAiUsage } from './wire.js';

/** OpenAI's documented default of `max_tokens` for `/v1/completions`. */
const DEFAULT_MAX_TOKENS = 16;
/** Prompts times `n` become concurrent upstream requests; this bounds one call's fan-out. */
const MAX_CHOICES = 256;

function isIdList(value: unknown): value is number[] {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'number');
}

/** `prompt` is a string, a list of strings, a list of token ids, or a list of such lists. */
function promptsOf(value: unknown): PromptInput[] {
  if (typeof value === 'string') return [{ prompt: value }];
  if (isIdList(value)) return [{ inputIds: value }];
  if (Array.isArray(value) && value.length > 0) {
    if (value.every((v) => typeof v === 'string')) return value.map((prompt: string) => ({ prompt }));
    if (value.every(isIdList)) return value.map((inputIds: number[]) => ({ inputIds }));
  }
  throw invalidArgument(
    'prompt',
    value,
    'must be a string, an array of strings, an array of token ids, or an array of token-id arrays',
  );
}

/** Reads a `/v1/completions` body into the shape the response driver runs. */
export async function completionsFormat(body: Body, ctx: EndpointContext): Promise<EndpointFormat> {
  refuseUnknownFields(body, COMPLETION_FIELDS);
  const maxTokens = optionalInteger(body, 'max_tokens', 1, 2 ** 31 - 1) ?? DEFAULT_MAX_TOKENS;
  const params = commonParams(body, maxTokens);
  requireModel(params.model, ctx.modelName);
  const prompts = promptsOf(body.prompt);
  if (prompts.length * params.n > MAX_CHOICES) {
    throw invalidArgument(
      'prompt',
      `${prompts.length} prompts with n ${params.n}`,
      `must ask for at most ${MAX_CHOICES} choices in all`,
    );
  }
  refuseNonEmpty(body, 'suffix', 'is not supported (no fill-in-the-middle on this backend)');
  const bestOf = optionalInteger(body, 'best_of', 1, 128);
  if (bestOf !== undefined && bestOf !== params.n) {
    throw invalidArgument('best_of', bestOf, 'is not supported apart from best_of equal to n');
  }
  const echo = optionalBoolean(body, 'echo') ?? false;
  const logprobs = optionalInteger(body, 'logprobs', 0, 5);
  if (echo && logprobs !== undefined) {
    throw invalidArgument(
      'echo',
      echo,
      'cannot be combined with logprobs (prompt log probs are not returned)',
    );
  }
  const alternatives = logprobs !== undefined && (await requireLogProbs(ctx.llm, 'logprobs', ctx.signal));
  const echoed = prompts.map((p) => {
    if (!echo) return '';
    if ('prompt' in p) return p.prompt;
    if (ctx.tokenizer === undefined)
      throw invalidArgument('echo', echo, 'with a token-id prompt needs the server to have a tokenizer');
    return ctx.tokenizer.decode(p.inputIds);
  });
  const sampling = {
    ...params.sampling,
    ...(logprobs !== undefined ? { returnLogProbs: true } : {}),
    ...(alternatives && logprobs !== undefined && logprobs > 0 ? { topLogProbs: logprobs } : {}),
  };
  const id = responseId('cmpl');
  const created = unixSeconds();
  const head = { id, object: 'text_completion', created, model: ctx.modelName };
  const promptOf = (choice: number): string => echoed[Math.floor(choice / params.n)] ?? '';
  // text_offset counts from the start of the choice's text, echoed prompt included.
  const offsets: number[] = [];
  const chunk = (index: number, text: string, logprobsField: unknown, finish: string | null) => {
    const choices = [{ index, text, logprobs: logprobsField, finish_reason: finish }];
    return params.includeUsage ? { ...head, choices, usage: null } : { ...head, choices };
  };
  const event = (index: number, text: string, logprobsField: unknown, finish: string | null) =>
    sseEvent(JSON.stringify(chunk(index, text, logprobsField, finish)));
  // The chunk of a plain token, per choice: made once, then only the text is serialized.
  const textEvent = choiceTemplates((index, text) => chunk(index, text, null, null));
  return {
    prompts,
    params: { ...params, sampling },
    complete: (choices: readonly ChoiceOutcome[], usage: OpenAiUsage) => ({
      ...head,
      choices: choices.map((c) => {
        const prefix = promptOf(c.index);
        return {
          index: c.index,
          text: prefix + c.text,
          logprobs:
            logprobs !== undefined && c.logProbs !== undefined
              ? completionLogProbs(c.logProbs, logprobs, prefix.length)
              : null,
          finish_reason: c.finishReason,
        };
      }),
      usage,
    }),
    opening: () => {
      if (!echo) return NO_EVENTS;
      const out: SseText[] = [];
      for (let choice = 0; choice < prompts.length * params.n; choice++) {
        offsets[choice] = promptOf(choice).length;
        out.push(event(choice, promptOf(choice), null, null));
      }
      return joinSse(out);
    },
    delta: ({ choice, text, logProbs }) => {
      // text_offset is only ever read with log probs, so without them tokens skip its bookkeeping.
      if (logprobs === undefined) return textEvent(choice, text);
      const at = offsets[choice] ?? 0;
      offsets[choice] = at + text.length;
      if (logProbs === undefined) return textEvent(choice, text);
      return event(choice, text, completionLogProbs(logProbs, logprobs, at), null);
    },
    finish: (choice, reason) => event(choice, '', null, reason),
    usage: (usage) => sseEvent(JSON.stringify({ ...head, choices: [], usage })),
  };
}
