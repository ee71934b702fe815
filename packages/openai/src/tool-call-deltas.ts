import { toolCallId } from './ids.js';
import type { ToolCallParser, ToolCallStream, ToolStreamPiece } from './tool-parsers/index.js';
import type { OpenAiToolCall } from './wire.js';

/** What a parser needs besides the output: the offered functions and where warnings go. */
export interface ToolOutputContext {
  readonly parser: ToolCallParser;
  readonly known: ReadonlySet<string>;
  readonly warn: (message: string) => void;
}

/** A chat delta: content text, or one piece of one tool call. */
export type ChatDelta =
  | { readonly content: string }
  | {
      readonly tool_calls: readonly {
        readonly index: number;
        readonly id?: string;
        readonly type?: 'function';
        readonly function: { readonly name?: string; readonly arguments: string };
      }[];
    };

/**
 * A call's arguments in the pieces a stream sends: `{`, each member, `}`. Joined they are the
 * arguments text exactly, as in the non-streamed message.
 */
function argumentPieces(args: string): string[] {
  const entries = Object.entries(JSON.parse(args) as Record<string, unknown>);
  if (entries.length === 0) return [args];
  return [
    '{',
    ...entries.map(([k, v], i) => `${i > 0 ? ',' : ''}${JSON.stringify(k)}:${JSON.stringify(v)}`),
    '}',
  ];
}

/**
 * One streamed choice's output turned into OpenAI chat deltas: text as `content`, each call as a
 * first delta with its index, id and name, then its arguments in pieces.
 */
export class ToolCallDeltas {
  private readonly stream: ToolCallStream;
  private calls = 0;

  constructor(ctx: ToolOutputContext) {
    this.stream = ctx.parser.start({ known: ctx.known, warn: ctx.warn });
  }

  /** Whether any call went out, which makes the finish reason `tool_calls`. */
  get called(): boolean {
    return this.calls > 0;
  }

  push(text: string): ChatDelta[] {
    return this.deltas(this.stream.push(text));
  }

  end(): ChatDelta[] {
    return this.deltas(this.stream.end());
  }

  private deltas(pieces: readonly ToolStreamPiece[]): ChatDelta[] {
    const out: ChatDelta[] = [];
    for (const piece of pieces) {
      if (piece.type === 'content') {
        out.push({ content: piece.text });
        continue;
      }
      const index = this.calls++;
      const { name, arguments: args } = piece.call;
      out.push({
        tool_calls: [{ index, id: toolCallId(), type: 'function', function: { name, arguments: '' } }],
      });
      for (const part of argumentPieces(args)) {
        out.push({ tool_calls: [{ index, function: { arguments: part } }] });
      }
    }
    return out;
  }
}

/** A whole choice's text read as content and calls, as the non-streamed message carries them. */
export function readToolOutput(
  ctx: ToolOutputContext,
  text: string,
): { content: string | null; toolCalls: OpenAiToolCall[] } {
  const stream = ctx.parser.start({ known: ctx.known, warn: ctx.warn });
  const pieces = [...stream.push(text), ...stream.end()];
  const content = pieces.flatMap((p) => (p.type === 'content' ? [p.text] : [])).join('');
  const toolCalls = pieces.flatMap((p): OpenAiToolCall[] =>
    p.type === 'call'
      ? [{ id: toolCallId(), type: 'function', function: { name: p.call.name, arguments: p.call.arguments } }]
      : [],
  );
  return { content: toolCalls.length > 0 && content.length === 0 ? null : content, toolCalls };
}
