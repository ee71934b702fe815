import type { ParsedToolCall, ToolCallParser, ToolStreamPiece } from '@trtllm/tokenizers';
import fc from 'fast-check';

/** What a parser made of one output: the content text (null when empty), the calls, the warnings. */
export interface Parsed {
  readonly content: string | null;
  readonly calls: ParsedToolCall[];
  readonly warnings: string[];
}

/** Feeds `pieces` one push at a time, then ends. */
export function runParser(
  parser: ToolCallParser,
  known: readonly string[],
  pieces: readonly string[],
): Parsed {
  const warnings: string[] = [];
  const stream = parser.start({ known: new Set(known), warn: (m) => warnings.push(m) });
  const out: ToolStreamPiece[] = [];
  for (const p of pieces) out.push(...stream.push(p));
  out.push(...stream.end());
  const content = out.flatMap((p) => (p.type === 'content' ? [p.text] : [])).join('');
  return {
    content: content.length > 0 ? content : null,
    calls: out.flatMap((p) => (p.type === 'call' ? [p.call] : [])),
    warnings,
  };
}

/** `text` cut at arbitrary points, as a model's deltas might cut it. */
export const splitsOf = (text: string) =>
  fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: 12 }).map((cuts) => {
    const at = [0, ...cuts.filter((c) => c < text.length).sort((a, b) => a - b), text.length];
    return at.slice(1).map((end, i) => text.slice(at[i], end));
  });
