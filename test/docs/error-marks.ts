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
      marks.push({ file, line: index + 1, name: m[1]!, quoted: m[3] });
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
