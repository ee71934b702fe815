import type { GenerateRequest, ModelSchema } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import type { ChatTemplate, ToolCallParserChoice, ToolCallPlan } from '@trtllm/tokenizers';
import { requireGuidedDecoding, requireImages, requireLogProbs, requireModel } from './capabilities.js';
import { chatMessages } from './chat-messages.js';
import { toolPlan } from './chat-tools.js';
import type { ChoiceOutcome } from './choices.js';
import { choiceTemplates } from './chunk-template.js';
import type { EndpointContext, EndpointFormat } from './endpoint.js';
import { responseId, unixSeconds } from './ids.js';
import { chatLogProbs } from './logprobs.js';
import { type Body, commonParams, optionalBoolean, optionalInteger } from './params.js';
import { CHAT_FIELDS, refuseUnknownFields, refuseUnsupportedChatFields } from './request-fields.js';
import { NO_EVENTS, sseEvent, sseEvents } from './sse.js';
import { readToolOutput, ToolCallDeltas, type ToolOutputContext } from './tool-call-deltas.js';
import type { OpenAiChatFinishReason, OpenAiFinishReason, OpenAiUsage } from './wire.js';

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

/** The guide of a request: from its tool choice or its response format, never both. */
async function requestGuide(
  body: Body,
  tools: ToolCallPlan | undefined,
  ctx: EndpointContext,
): Promise<GenerateRequest['guidedDecoding']> {
  const format = guidedDecoding(body.response_format);
  if (format === undefined) return tools?.guided;
  if (tools?.guided !== undefined) {
    throw invalidArgument(
      'response_format',
      body.response_format,
      'cannot be combined with a required or named tool_choice (both constrain the output)',
    );
  }
  await requireGuidedDecoding(ctx.llm, 'response_format', body.response_format, ctx.signal);
  return format;
}

/**
 * Whether the model streams text the server decoded token by token, so that a character split
 * over tokens arrives as U+FFFD (the ensemble, a BLS without accumulate_tokens): its non-streamed
 * text is decoded whole and exact. The raw model is detokenized here, the LLM-API model and an
 * accumulating BLS resend the whole text: both stream exact text.
 */
function streamedTextIsLossy(schema: ModelSchema): boolean {
  return (schema.flavor === 'ensemble' || schema.flavor === 'bls') && !schema.cumulativeText;
}

/** What the chat endpoint needs besides the shared endpoint context. */
export interface ChatContext extends EndpointContext {
  readonly template: ChatTemplate;
  readonly defaultMaxTokens: number;
  readonly toolCallParser: ToolCallParserChoice;
  /** Receives the warning about model output that looked like a tool call but was not one. */
  readonly warn: (message: string) => void;
}

/** A model that stopped after making calls stopped to have them run. */
function chatFinish(reason: OpenAiFinishReason, called: boolean): OpenAiChatFinishReason {
  return called && reason === 'stop' ? 'tool_calls' : reason;
}

/** Reads a `/v1/chat/completions` body into the shape the response driver runs. */
export async function chatCompletionsFormat(body: Body, ctx: ChatContext): Promise<EndpointFormat> {
  refuseUnknownFields(body, CHAT_FIELDS);
  refuseUnsupportedChatFields(body);
  // max_tokens is the deprecated spelling; the newer name wins when both are sent.
  const maxTokens =
    optionalInteger(body, 'max_completion_tokens', 1, 2 ** 31 - 1) ??
    optionalInteger(body, 'max_tokens', 1, 2 ** 31 - 1) ??
    ctx.defaultMaxTokens;
  const params = commonParams(body, maxTokens);
  requireModel(params.model, ctx.modelName);
  const { messages, images, imageFields } = chatMessages(body.messages);
  if (imageFields[0] !== undefined) await requireImages(ctx.llm, imageFields[0], ctx.signal);
  const tools = await toolPlan(body, {
    llm: ctx.llm,
    template: ctx.template,
    parserChoice: ctx.toolCallParser,
    signal: ctx.signal,
  });
  const logprobs = optionalBoolean(body, 'logprobs') ?? false;
  const top = optionalInteger(body, 'top_logprobs', 0, 20);
  if (top !== undefined && !logprobs)
    throw invalidArgument('top_logprobs', top, 'needs logprobs set to true');
  const alternatives = logprobs && (await requireLogProbs(ctx.llm, 'logprobs', ctx.signal));
  const guided = await requestGuide(body, tools, ctx);
  const streamWhole =
    params.stream &&
    (tools !== undefined || guided !== undefined) &&
    streamedTextIsLossy(await ctx.llm.schema({ signal: ctx.signal }));
  const prompt = ctx.template.render(messages, tools !== undefined ? { tools: tools.tools } : {});
  const sampling = {
    ...params.sampling,
    ...(logprobs ? { returnLogProbs: true } : {}),
    ...(alternatives && top !== undefined && top > 0 ? { topLogProbs: top } : {}),
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
  const event = (index: number, delta: object, logprobsField: unknown, finish: string | null) =>
    sseEvent(JSON.stringify(chunk(index, delta, logprobsField, finish)));
  // The chunk of plain content, per choice: made once, then only the text is serialized.
  const contentEvent = choiceTemplates((index, content) => chunk(index, { content }, null, null));
  const output: ToolOutputContext | undefined =
    tools !== undefined
      ? { parser: tools.parser, known: tools.known, warn: (m) => ctx.warn(`${id}: ${m}`) }
      : undefined;
  const streams = new Map<number, ToolCallDeltas>();
  const streamOf = (choice: number, out: ToolOutputContext): ToolCallDeltas => {
    let s = streams.get(choice);
    if (s === undefined) {
      s = new ToolCallDeltas(out);
      streams.set(choice, s);
    }
    return s;
  };
  const message = (c: ChoiceOutcome) => {
    if (output === undefined) {
      return { message: { role: 'assistant', content: c.text, refusal: null }, finish: c.finishReason };
    }
    const { content, toolCalls } = readToolOutput(output, c.text);
    return {
      message: {
        role: 'assistant',
        content,
        refusal: null,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      },
      finish: chatFinish(c.finishReason, toolCalls.length > 0),
    };
  };
  return {
    prompts: [images.length > 0 ? { prompt, images } : { prompt }],
    params: { ...params, sampling },
    streamWhole,
    complete: (choices: readonly ChoiceOutcome[], usage: OpenAiUsage) => ({
      ...head,
      object: 'chat.completion',
      choices: choices.map((c) => {
        const m = message(c);
        return {
          index: c.index,
          message: m.message,
          logprobs: logprobs && c.logProbs !== undefined ? chatLogProbs(c.logProbs, top ?? 0) : null,
          finish_reason: m.finish,
        };
      }),
      usage,
    }),
    // OpenAI opens every choice with a delta that carries only the role.
    opening: () =>
      sseEvents(
        Array.from({ length: params.n }, (_, i) => chunk(i, { role: 'assistant', content: '' }, null, null)),
      ),
    delta: ({ choice, text, logProbs }) => {
      const lp = logprobs && logProbs !== undefined ? chatLogProbs(logProbs, top ?? 0) : null;
      if (output === undefined) {
        return lp === null ? contentEvent(choice, text) : event(choice, { content: text }, lp, null);
      }
      const deltas = streamOf(choice, output).push(text);
      // Text held back by the parser still has its log probs delivered, on an empty delta.
      if (deltas.length === 0) return lp !== null ? event(choice, {}, lp, null) : NO_EVENTS;
      return sseEvents(deltas.map((d, k) => chunk(choice, d, k === 0 ? lp : null, null)));
    },
    finish: (choice, reason) => {
      if (output === undefined) return event(choice, {}, null, reason);
      const s = streamOf(choice, output);
      const rest = s.end().map((d) => chunk(choice, d, null, null));
      return sseEvents([...rest, chunk(choice, {}, null, chatFinish(reason, s.called))]);
    },
    usage: (usage) => sseEvent(JSON.stringify({ ...head, choices: [], usage })),
  };
}
