import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './markdown.js';

/** An error message quoted in prose, marked `<!-- error:NAME -->`QUOTE``. */
export interface ErrorMark {
  readonly file: string;
  /** The 1-based line of the mark. */
  readonly line: number;
  readonly name: string;
  /** The text between the backticks right after the mark, as the reader sees it. */
  readonly quoted: string;
  /** What the first cell of the mark's table row says of the error, when the mark is in a later cell. */
  readonly row: RowFacts | undefined;
}

/**
 * The first cell of an error table's row, as `[status] `kind`(, `name: value`)*`: `` `not_found` ``,
 * `` `unavailable`, `endpointProtocol: 'http'` ``, `` 400 `invalid_request_error`, `param: "max_token"` ``.
 * The kind is the error's code (an OpenAI answer's type); the named values are fields of the error.
 */
export interface RowFacts {
  readonly status?: number;
  readonly kind?: string;
  readonly fields: Readonly<Record<string, string>>;
}

function rowFacts(line: string, markAt: number): RowFacts | undefined {
  if (!line.startsWith('|')) return undefined;
  const end = line.indexOf(' |', 1);
  if (end === -1 || markAt < end) return undefined;
  const cell = line.slice(1, end).trim();
  // A first cell that is itself a quote (trtllm-openai's start-up table) says nothing of the error.
  if (cell.includes('<!-- error:')) return undefined;
  const items = [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
  const status = /^(\d{3})\b/.exec(cell)?.[1];
  const kind = items.find((i) => /^[a-z_]+$/.test(i));
  const fields: Record<string, string> = {};
  for (const item of items) {
    const field = /^(\w+): (['"]?)(.*)\2$/.exec(item);
    if (field) fields[field[1]!] = field[3]!;
  }
  return {
    ...(status !== undefined ? { status: Number(status) } : {}),
    ...(kind !== undefined ? { kind } : {}),
    fields,
  };
}

/**
 * Every `<!-- error:NAME -->`QUOTE`` of a Markdown file (a mark not followed by a quote is an error);
 * a mark shown in a code span (right after a backtick) is prose about marks, not one.
 */
export function errorMarks(file: string, text = readFileSync(join(root, file), 'utf8')): ErrorMark[] {
  const marks: ErrorMark[] = [];
  text.split('\n').forEach((content, index) => {
    for (const m of content.matchAll(/(?<!`)<!-- error:([\w.-]+) -->(`([^`]*)`)?/g)) {
      if (m[3] === undefined)
        throw new Error(`${file}:${index + 1}: the mark error:${m[1]} is not followed by a \`quote\``);
      marks.push({ file, line: index + 1, name: m[1]!, quoted: m[3], row: rowFacts(content, m.index) });
    }
  });
  return marks;
}

/**
 * A quote as a pattern of the whole message. The doc's gaps stand for any text: `...` (the reader
 * is spared a part), `…` (a long list cut, a number that varies) and `<words in brackets>` (a
 * placeholder such as `<why it did not load>`); everything else must be there, character for
 * character. A quote that starts with a gap is the end of the message, one that ends with a gap its
 * start.
 */
export function quotePattern(quoted: string): RegExp {
  const parts = quoted.split(/\.\.\.|…|<[^<>]+>/);
  return new RegExp(`^${parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^]*?')}$`);
}

/** Whether the message is what the quote says, its gaps filled with any text. */
export function quoteMatches(quoted: string, message: string): boolean {
  return quotePattern(quoted).test(message);
}
