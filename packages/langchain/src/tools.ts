import type { BindToolsInput } from '@langchain/core/language_models/chat_models';
import { AIMessageChunk, type ToolCall, type ToolCallChunk } from '@langchain/core/messages';
import { ChatGenerationChunk } from '@langchain/core/outputs';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import type { ModelSchema } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import {
  argumentPieces,
  type ChatTemplate,
  type ChatTool,
  type ParsedToolCall,
  planToolCalls,
  readToolCalls,
  type ToolCallParserChoice,
  type ToolCallPlan,
  ToolCallReader,
  type ToolChoice,
} from '@trtllm/tokenizers';
import { deltaChunk } from './chunks.js';

/** LangChain tools (tool objects, zod-described functions, OpenAI tool definitions) as the template's functions. */
export function chatToolsOf(tools: readonly BindToolsInput[]): ChatTool[] {
  if (!Array.isArray(tools)) throw invalidArgument('tools', tools, 'must be an array of tools');
  return tools.map((t, i) => {
    const { function: fn } = convertToOpenAITool(t as Parameters<typeof convertToOpenAITool>[0]);
    if (typeof fn?.name !== 'string' || fn.name.length === 0) {
      throw invalidArgument(
        `tools[${i}]`,
        t,
        'must be a LangChain tool or { type: "function", function: { name } }',
      );
    }
    return {
      name: fn.name,
      ...(fn.description !== undefined ? { description: fn.description } : {}),
      ...(fn.parameters !== undefined ? { parameters: fn.parameters as Record<string, unknown> } : {}),
    };
  });
}

/**
 * LangChain's `tool_choice`: `auto`, `none`, `any` or `required` (at least one call), a tool's
 * name, or OpenAI's `{ type: "function", function: { name } }`.
 */
export function toolChoiceOf(value: unknown): ToolChoice {
  if (value === undefined || value === null || value === 'auto') return 'auto';
  if (value === 'none') return 'none';
  if (value === 'any' || value === 'required') return 'required';
  if (typeof value === 'string' && value.length > 0) return { name: value };
  const named = value as { type?: unknown; function?: { name?: unknown } };
  if (typeof named === 'object' && named.type === 'function' && typeof named.function?.name === 'string') {
    return { name: named.function.name };
  }
  throw invalidArgument(
    'tool_choice',
    value,
    'must be "auto", "none", "any", "required", a tool name or { type: "function", function: { name } }',
  );
}

/** The plan of a call with bound tools, or undefined; a deployment that cannot do it is refused. */
export function planFor(input: {
  readonly tools: readonly ChatTool[] | undefined;
  readonly toolChoice: unknown;
  readonly parallel: boolean | undefined;
  readonly template: ChatTemplate;
  readonly parser: ToolCallParserChoice;
  readonly schema: ModelSchema;
}): ToolCallPlan | undefined {
  const choice = toolChoiceOf(input.toolChoice);
  if (input.tools === undefined || input.tools.length === 0) {
    if (choice !== 'auto' && choice !== 'none') {
      throw invalidArgument('tool_choice', input.toolChoice, 'needs tools: bind them with bindTools()');
    }
    return undefined;
  }
  const planning = planToolCalls({
    tools: input.tools,
    choice,
    ...(input.parallel !== undefined ? { parallel: input.parallel } : {}),
    template: input.template,
    parser: input.parser,
    schema: input.schema,
    names: { toolChoice: 'tool_choice', parser: 'toolCallParser' },
  });
  if (planning.type === 'unsupported') throw planning.error;
  return planning.type === 'plan' ? planning.plan : undefined;
}

/** A call id in OpenAI's `call_…` form, which LangChain's ToolMessages carry back. */
function callId(): string {
  return `call_${globalThis.crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
}

function toolCallOf(call: ParsedToolCall, id: string): ToolCall {
  return {
    type: 'tool_call',
    id,
    name: call.name,
    args: JSON.parse(call.arguments) as Record<string, unknown>,
  };
}

/** A whole reply read as the message's text and its `tool_calls`. */
export function toolMessageParts(
  plan: ToolCallPlan,
  output: string,
  warn: (message: string) => void,
): { readonly content: string; readonly toolCalls: ToolCall[] } {
  const { text, calls } = readToolCalls(plan, warn, output);
  return { content: text, toolCalls: calls.map((c) => toolCallOf(c, callId())) };
}

/**
 * A streamed reply as LangChain chunks: text as content, each call as `tool_call_chunks` (its id
 * and name first, then its arguments in pieces, all under the call's index), which LangChain's
 * chunk merging turns back into `tool_calls`. Without a plan the text passes straight through.
 */
export class ToolChunks {
  private readonly reader: ToolCallReader | undefined;

  constructor(plan: ToolCallPlan | undefined, warn: (message: string) => void) {
    this.reader = plan !== undefined ? new ToolCallReader(plan, warn) : undefined;
  }

  push(text: string): ChatGenerationChunk[] {
    if (this.reader === undefined) return [deltaChunk(text)];
    return this.chunks(this.reader.push(text));
  }

  end(): ChatGenerationChunk[] {
    return this.reader !== undefined ? this.chunks(this.reader.end()) : [];
  }

  private chunks(pieces: ReturnType<ToolCallReader['push']>): ChatGenerationChunk[] {
    return pieces.flatMap((piece) => {
      if (piece.type === 'text') return [deltaChunk(piece.text)];
      const { index, call } = piece;
      const first: ToolCallChunk = {
        type: 'tool_call_chunk',
        index,
        id: callId(),
        name: call.name,
        args: '',
      };
      return [
        first,
        ...argumentPieces(call.arguments).map(
          (args): ToolCallChunk => ({ type: 'tool_call_chunk', index, args }),
        ),
      ].map(
        (chunk) =>
          new ChatGenerationChunk({
            text: '',
            message: new AIMessageChunk({ content: '', tool_call_chunks: [chunk] }),
          }),
      );
    });
  }
}
