/** One function call read from a model's output; `arguments` is compact JSON text of an object. */
export interface ParsedToolCall {
  readonly name: string;
  readonly arguments: string;
}

/** What an incremental parser hands on: text for `content`, or a call complete and checked. */
export type ToolStreamPiece =
  | { readonly type: 'content'; readonly text: string }
  | { readonly type: 'call'; readonly call: ParsedToolCall };

/**
 * An incremental tool-call parser for one choice: text goes in as the model produces it, pieces come
 * out as soon as they are certain. A call is handed on only once its whole text parsed and named a
 * known function, so a stream never shows a call that turns out to be broken.
 */
export interface ToolCallStream {
  /** The model's next text; what is certain of it so far comes out. */
  push(text: string): ToolStreamPiece[];
  /** The model finished: what was held back, as calls or as text. */
  end(): ToolStreamPiece[];
}

/** What a parser checks calls against, and where it reports output it returns as text. */
export interface ToolParseContext {
  /** Names of the functions offered in the request. */
  readonly known: ReadonlySet<string>;
  /** Receives the reason when text that looked like a call is returned as text. */
  readonly warn: (message: string) => void;
}

/** A named output format and the parser for it. */
export interface ToolCallParser {
  readonly name: string;
  /** A parser for one output (one choice, one sequence). */
  start(ctx: ToolParseContext): ToolCallStream;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Checks one decoded call object: `name` must be an offered function, the arguments (under
 * `arguments` or `parameters`, the two spellings models use) an object, or JSON text of one.
 * Returns the reason as a string when the call is not usable.
 */
export function checkCall(value: unknown, ctx: ToolParseContext): ParsedToolCall | string {
  if (!isObject(value)) return 'a tool call is not a JSON object';
  const { name } = value;
  if (typeof name !== 'string') return 'a tool call has no "name"';
  if (!ctx.known.has(name)) return `the model called unknown function '${name}'`;
  let args = value.arguments ?? value.parameters ?? {};
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return `the arguments of '${name}' are not JSON`;
    }
  }
  if (!isObject(args)) return `the arguments of '${name}' are not a JSON object`;
  return { name, arguments: JSON.stringify(args) };
}

/** Parses JSON text, or says why not. */
export function parseJson(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { error: `broken JSON in a tool call (${(err as Error).message})` };
  }
}

/**
 * A parser for formats that can only be judged whole (the whole output is calls, or none is): it
 * holds everything until the end and then returns either every call or the text unchanged.
 */
export function wholeOutput(
  parserName: string,
  ctx: ToolParseContext,
  read: (text: string) => readonly unknown[] | string,
): ToolCallStream {
  let text = '';
  return {
    push(piece) {
      text += piece;
      return [];
    },
    end() {
      const values = read(text);
      const calls = typeof values === 'string' ? values : checkAll(values, ctx);
      if (typeof calls === 'string') {
        ctx.warn(`${parserName} tool-call parser: ${calls}; the output is returned as text`);
        return text.length > 0 ? [{ type: 'content', text }] : [];
      }
      return calls.map((call) => ({ type: 'call', call }));
    },
  };
}

function checkAll(values: readonly unknown[], ctx: ToolParseContext): ParsedToolCall[] | string {
  if (values.length === 0) return 'no tool call in the output';
  const calls: ParsedToolCall[] = [];
  for (const value of values) {
    const call = checkCall(value, ctx);
    if (typeof call === 'string') return call;
    calls.push(call);
  }
  return calls;
}

/** The length of the longest end of `text` that could be the start of `marker`. */
export function partialMarker(text: string, marker: string): number {
  for (let k = Math.min(marker.length - 1, text.length); k > 0; k--) {
    if (text.endsWith(marker.slice(0, k))) return k;
  }
  return 0;
}
