import { type GenerateRequest, invalidArgument } from '@trtllm/sdk';
import { requireLogProbs, requireModel } from './capabilities.js';
import { chatMessages } from './chat-messages.js';
import type { ChatTemplate } from '@trtllm/tokenizers';
import type { ChoiceOutcome } from './choices.js';
import type { EndpointContext, EndpointFormat } from './endpoint.js';
import { responseId, unixSeconds } from './ids.js';
import { chatLogProbs } from './logprobs.js';
import { type Body, commonParams, optionalBoolean, optionalInteger, refuseNonEmpty } from './params.js';
import type { OpenAiUsage } from './wire.js';

/** `response_format` as guided decoding, where the model has the guided-decoding inputs. */
function guidedDecoding(value: unknown): GenerateRequest['guidedDecoding'] {
  if (value === undefined || value === null) return undefined;
  const format = value as { type?: unknown; json_schema?: { schema?: unknown } };
  if (format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json' };
  if (format.type === 'json_schema' && format.json_schema?.schema !== undefined) {
    return { type: 'json_schema', guide: JSON.stringify(format.json_schema.schema) };
  }
  throw invalidArgument(
    'response_format',
    value,
    'must be { "type": "text" | "json_object" | "json_schema" }',
  );
}

/** Reads a `/v1/chat/completions` body into the shape the response driver runs. */
export async function chatCompletionsFormat(
  body: Body,
  ctx: EndpointContext & { readonly template: ChatTemplate; readonly defaultMaxTokens: number },
): Promise<EndpointFormat> {
  // max_tokens is the deprecated spelling; the newer name wins when both are sent.
  const maxTokens =
    optionalInteger(body, 'max_completion_tokens', 1, 2 ** 31 - 1) ??
    optionalInteger(body, 'max_tokens', 1, 2 ** 31 - 1) ??
    ctx.defaultMaxTokens;
  const params = commonParams(body, maxTokens);
  requireModel(params.model, ctx.modelName);
  const messages = chatMessages(body.messages);
  refuseNonEmpty(body, 'tools', 'tool calling is not supported');
  refuseNonEmpty(body, 'functions', 'function calling is not supported');
  const logprobs = optionalBoolean(body, 'logprobs') ?? false;
  const top = optionalInteger(body, 'top_logprobs', 0, 20);
  if (top !== undefined && !logprobs)
    throw invalidArgument('top_logprobs', top, 'needs logprobs set to true');
  if (logprobs) await requireLogProbs(ctx.llm, 'logprobs', ctx.signal);
  const guided = guidedDecoding(body.response_format);
  const prompt = ctx.template.render(messages);
  const sampling = {
    ...params.sampling,
    ...(logprobs ? { returnLogProbs: true } : {}),
    ...(guided !== undefined ? { guidedDecoding: guided } : {}),
  };
  const id = responseId('chatcmpl');
  const created = unixSeconds();
  const head = { id, object: 'chat.completion.chunk', created, model: ctx.modelName };
  const usageField = params.includeUsage ? { usage: null } : {};
  const chunk = (index: number, delta: object, logprobsField: unknown, finish: string | null) => ({
    ...head,
    choices: [{ index, delta, logprobs: logprobsField, finish_reason: finish }],
    ...usageField,
  });
  return {
    prompts: [{ prompt }],
    params: { ...params, sampling },
    complete: (choices: readonly ChoiceOutcome[], usage: OpenAiUsage) => ({
      ...head,
      object: 'chat.completion',
      choices: choices.map((c) => ({
        index: c.index,
        message: { role: 'assistant', content: c.text, refusal: null },
        logprobs: logprobs && c.logProbs !== undefined ? chatLogProbs(c.logProbs, top ?? 0) : null,
        finish_reason: c.finishReason,
      })),
      usage,
    }),
    // OpenAI opens every choice with a delta that carries only the role.
    opening: () =>
      Array.from({ length: params.n }, (_, i) => chunk(i, { role: 'assistant', content: '' }, null, null)),
    delta: (event) =>
      chunk(
        event.choice,
        { content: event.text },
        logprobs && event.logProbs !== undefined ? chatLogProbs(event.logProbs, top ?? 0) : null,
        null,
      ),
    finish: (choice, reason) => chunk(choice, {}, null, reason),
    usage: (usage) => ({ ...head, choices: [], usage }),
  };
}
