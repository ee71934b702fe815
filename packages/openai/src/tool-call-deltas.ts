import {
  argumentPieces,
  readToolCalls,
  type ToolCallParser,
  ToolCallReader,
  type ToolOutputPiece,
} from '@trtllm/tokenizers';
import { toolCallId } from './ids.js';
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
 * One streamed choice's output turned into OpenAI chat deltas: text as `content`, each call as a
 * first delta with its index, id and name, then its arguments in pieces.
 */
export class ToolCallDeltas {
  private readonly reader: ToolCallReader;

  constructor(ctx: ToolOutputContext) {
    this.reader = new ToolCallReader(ctx, ctx.warn);
  }

  /** Whether any call went out, which makes the finish reason `tool_calls`. */
  get called(): boolean {
    return this.reader.callCount > 0;
  }

  push(text: string): ChatDelta[] {
    return this.deltas(this.reader.push(text));
  }

  end(): ChatDelta[] {
    return this.deltas(this.reader.end());
  }

  private deltas(pieces: readonly ToolOutputPiece[]): ChatDelta[] {
    return pieces.flatMap((piece): ChatDelta[] => {
      if (piece.type === 'text') return [{ content: piece.text }];
      const { index, call } = piece;
      return [
        {
          tool_calls: [
            { index, id: toolCallId(), type: 'function', function: { name: call.name, arguments: '' } },
          ],
        },
        ...argumentPieces(call.arguments).map((part) => ({
          tool_calls: [{ index, function: { arguments: part } }],
        })),
      ];
    });
  }
}

/** A whole choice's text read as content and calls, as the non-streamed message carries them. */
export function readToolOutput(
  ctx: ToolOutputContext,
  text: string,
): { content: string | null; toolCalls: OpenAiToolCall[] } {
  const read = readToolCalls(ctx, ctx.warn, text);
  const toolCalls = read.calls.map(
    (c): OpenAiToolCall => ({
      id: toolCallId(),
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }),
  );
  return { content: toolCalls.length > 0 && read.text.length === 0 ? null : read.text, toolCalls };
}
