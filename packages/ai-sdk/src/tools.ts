import {
  type LanguageModelV4CallOptions,
  type LanguageModelV4Content,
  type LanguageModelV4StreamPart,
  type SharedV4Warning,
  UnsupportedFunctionalityError,
} from '@ai-sdk/provider';
import { generateId } from '@ai-sdk/provider-utils';
import type { ModelSchema } from '@trtllm/sdk';
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
  type ToolOutputPiece,
} from '@trtllm/tokenizers';

/** A call's tool use: the plan (none when the tools are not offered) and what the caller is told. */
export interface ToolUse {
  readonly plan: ToolCallPlan | undefined;
  readonly warnings: SharedV4Warning[];
}

function choiceOf(choice: LanguageModelV4CallOptions['toolChoice']): ToolChoice {
  if (choice === undefined) return 'auto';
  return choice.type === 'tool' ? { name: choice.toolName } : choice.type;
}

/**
 * The AI SDK's `tools` and `toolChoice` planned as every front end plans them. A template that
 * cannot show tools, or teaches no format a parser reads, gets the AI SDK's `unsupported` warning
 * and the request goes without tools; a `required` or named choice on a model without guided
 * decoding is an error, as a JSON response format is: the caller expects a call, and the model
 * could not be held to one.
 */
export function toolUse(
  options: LanguageModelV4CallOptions,
  schema: ModelSchema,
  template: ChatTemplate,
  parser: ToolCallParserChoice,
): ToolUse {
  const warnings: SharedV4Warning[] = [];
  const tools: ChatTool[] = [];
  for (const t of options.tools ?? []) {
    if (t.type === 'function') {
      tools.push({
        name: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        parameters: t.inputSchema as Record<string, unknown>,
      });
    } else {
      warnings.push({
        type: 'unsupported',
        feature: `provider tool '${t.id}'`,
        details: 'Triton runs no tools itself; only function tools are offered to the model',
      });
    }
  }
  const planning = planToolCalls({
    tools,
    choice: choiceOf(options.toolChoice),
    template,
    parser,
    schema,
    names: { toolChoice: 'toolChoice', parser: 'toolCallParser' },
  });
  if (planning.type === 'plan') return { plan: planning.plan, warnings };
  if (planning.type === 'unsupported') {
    if (planning.needs === 'guided_decoding') {
      throw new UnsupportedFunctionalityError({
        functionality: `toolChoice ${options.toolChoice?.type ?? 'auto'}`,
        message: planning.error.message,
      });
    }
    warnings.push({
      type: 'unsupported',
      feature: 'tools',
      details: `${planning.error.message}; the tools were not offered`,
    });
  }
  return { plan: undefined, warnings };
}

function toolCallPart(call: ParsedToolCall): LanguageModelV4Content {
  return { type: 'tool-call', toolCallId: generateId(), toolName: call.name, input: call.arguments };
}

/** A whole output as the AI SDK's content: the text around the calls, then each call with a new id. */
export function toolCallContent(
  plan: ToolCallPlan,
  output: string,
  warn: (message: string) => void,
): LanguageModelV4Content[] {
  const { text, calls } = readToolCalls(plan, warn, output);
  return [...(text.length > 0 ? [{ type: 'text' as const, text }] : []), ...calls.map(toolCallPart)];
}

/**
 * One streamed sequence as the AI SDK's stream parts. Text goes out in text parts; a call closes
 * the open text part and goes out as `tool-input-start`, its arguments as `tool-input-delta`s,
 * `tool-input-end`, then the `tool-call` itself, all under one id. Without a plan the text passes
 * straight through.
 */
export class StreamParts {
  private readonly reader: ToolCallReader | undefined;
  private textId: string | undefined;
  private texts = 0;

  constructor(
    private readonly idPrefix: string,
    plan: ToolCallPlan | undefined,
    warn: (message: string) => void,
  ) {
    this.reader = plan !== undefined ? new ToolCallReader(plan, warn) : undefined;
  }

  /** Whether the model made a call, which makes the finish reason `tool-calls`. */
  get called(): boolean {
    return (this.reader?.callCount ?? 0) > 0;
  }

  push(text: string): LanguageModelV4StreamPart[] {
    if (this.reader === undefined) return this.parts([{ type: 'text', text }]);
    return this.parts(this.reader.push(text));
  }

  /** The output ended: what the parser held back, and the open text part closed. */
  end(): LanguageModelV4StreamPart[] {
    const out = this.reader !== undefined ? this.parts(this.reader.end()) : [];
    this.closeText(out);
    return out;
  }

  /** Closes the open text part before an error ends the stream. */
  abandon(): LanguageModelV4StreamPart[] {
    const out: LanguageModelV4StreamPart[] = [];
    this.closeText(out);
    return out;
  }

  private parts(pieces: readonly ToolOutputPiece[]): LanguageModelV4StreamPart[] {
    const out: LanguageModelV4StreamPart[] = [];
    for (const piece of pieces) {
      if (piece.type === 'text') {
        if (piece.text.length === 0) continue;
        if (this.textId === undefined) {
          this.textId = `${this.idPrefix}-${this.texts++}`;
          out.push({ type: 'text-start', id: this.textId });
        }
        out.push({ type: 'text-delta', id: this.textId, delta: piece.text });
        continue;
      }
      this.closeText(out);
      const id = generateId();
      const { name, arguments: args } = piece.call;
      out.push({ type: 'tool-input-start', id, toolName: name });
      for (const delta of argumentPieces(args)) out.push({ type: 'tool-input-delta', id, delta });
      out.push({ type: 'tool-input-end', id });
      out.push({ type: 'tool-call', toolCallId: id, toolName: name, input: args });
    }
    return out;
  }

  private closeText(out: LanguageModelV4StreamPart[]): void {
    if (this.textId === undefined) return;
    out.push({ type: 'text-end', id: this.textId });
    this.textId = undefined;
  }
}
