import type { ToolCallPlan } from './plan.js';
import type { ParsedToolCall, ToolCallStream, ToolStreamPiece } from './tool-call.js';

/** A piece of streamed output: text for the reply, or one whole call with its place among the calls. */
export type ToolOutputPiece =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'call'; readonly index: number; readonly call: ParsedToolCall };

/** What reading an output needs of a plan: its parser and the offered functions. */
export type ToolReading = Pick<ToolCallPlan, 'parser' | 'known'>;

/**
 * One sequence's streamed output read as text and calls. Each front end turns the pieces into its
 * own stream parts (OpenAI deltas, AI SDK tool-input parts, LangChain tool-call chunks) and gives
 * the calls its own ids; the reading is the same for all of them.
 */
export class ToolCallReader {
  private readonly stream: ToolCallStream;
  private calls = 0;

  /** `warn` receives the reason when text that looked like a call is returned as text. */
  constructor(reading: ToolReading, warn: (message: string) => void) {
    this.stream = reading.parser.start({ known: reading.known, warn });
  }

  /** How many calls went out so far: any call makes the finish reason a tool-call one. */
  get callCount(): number {
    return this.calls;
  }

  /** The model's next text: the text and calls that are certain so far. */
  push(text: string): ToolOutputPiece[] {
    return this.pieces(this.stream.push(text));
  }

  /** The model finished: what the parser held back, as calls or as text. */
  end(): ToolOutputPiece[] {
    return this.pieces(this.stream.end());
  }

  private pieces(parsed: readonly ToolStreamPiece[]): ToolOutputPiece[] {
    return parsed.map((p) =>
      p.type === 'content'
        ? { type: 'text', text: p.text }
        : { type: 'call', index: this.calls++, call: p.call },
    );
  }
}

/** A whole output read as its text (the pieces around the calls, joined) and its calls. */
export function readToolCalls(
  reading: ToolReading,
  warn: (message: string) => void,
  output: string,
): { readonly text: string; readonly calls: readonly ParsedToolCall[] } {
  const reader = new ToolCallReader(reading, warn);
  const pieces = [...reader.push(output), ...reader.end()];
  return {
    text: pieces.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join(''),
    calls: pieces.flatMap((p) => (p.type === 'call' ? [p.call] : [])),
  };
}

/**
 * A call's arguments in the pieces a stream sends: `{`, each member, `}`. Joined they are the
 * arguments text exactly, as in the non-streamed message; a client that shows arguments as they
 * come sees them grow member by member.
 */
export function argumentPieces(args: string): string[] {
  const entries = Object.entries(JSON.parse(args) as Record<string, unknown>);
  if (entries.length === 0) return [args];
  return [
    '{',
    ...entries.map(([k, v], i) => `${i > 0 ? ',' : ''}${JSON.stringify(k)}:${JSON.stringify(v)}`),
    '}',
  ];
}
