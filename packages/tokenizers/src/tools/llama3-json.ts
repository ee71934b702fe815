import {
  type ToolCallParser,
  type ToolCallStream,
  type ToolParseContext,
  type ToolStreamPiece,
  wholeOutput,
} from './tool-call.js';

const PYTHON_TAG = '<|python_tag|>';

/**
 * Llama 3.1/3.2/3.3 JSON calls: the whole answer is `{"name": ..., "parameters": {...}}`, maybe
 * after `<|python_tag|>`, several separated by `;`. An answer that starts otherwise is text and
 * streams at once; one that starts like a call is held to its end, then is calls or, if any part
 * does not parse or names an unknown function, text with a warning.
 */
export const llama3JsonParser: ToolCallParser = {
  name: 'llama3_json',
  start: llama3Stream,
};

function llama3Stream(ctx: ToolParseContext): ToolCallStream {
  let head = '';
  let mode: 'undecided' | 'calls' | 'text' = 'undecided';
  const calls = wholeOutput('llama3_json', ctx, readCalls);
  const text = (t: string): ToolStreamPiece[] => (t.length > 0 ? [{ type: 'content', text: t }] : []);
  return {
    push(piece) {
      if (mode === 'text') return text(piece);
      if (mode === 'calls') return calls.push(piece);
      head += piece;
      const start = head.trimStart();
      if (start.length === 0 || PYTHON_TAG.startsWith(start)) return [];
      if (start.startsWith('{') || start.startsWith(PYTHON_TAG)) {
        mode = 'calls';
        return calls.push(head);
      }
      mode = 'text';
      return text(head);
    },
    end() {
      if (mode === 'calls') return calls.end();
      return mode === 'undecided' ? text(head) : [];
    },
  };
}

function readCalls(output: string): unknown[] | string {
  let body = output.trim();
  if (body.startsWith(PYTHON_TAG)) body = body.slice(PYTHON_TAG.length).trim();
  const parts = jsonObjects(body);
  if (parts === undefined) return 'the output is not JSON calls separated by ";"';
  const values: unknown[] = [];
  for (const part of parts) {
    try {
      values.push(JSON.parse(part));
    } catch (err) {
      return `broken JSON in a tool call (${(err as Error).message})`;
    }
  }
  return values;
}

/** Splits `{...}; {...}` into its objects by brace depth (outside strings); undefined if anything else is there. */
function jsonObjects(text: string): string[] | undefined {
  const parts: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '{') return undefined;
    const end = objectEnd(text, i);
    if (end === undefined) return undefined;
    parts.push(text.slice(i, end));
    i = end;
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i < text.length) {
      if (text[i] !== ';') return undefined;
      i++;
      while (i < text.length && /\s/.test(text[i]!)) i++;
    }
  }
  return parts;
}

function objectEnd(text: string, from: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i + 1;
  }
  return undefined;
}
