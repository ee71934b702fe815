/** Markdown the benchmark scripts share: tables, and the generated blocks they rewrite inside docs. */
import { readFile, writeFile } from 'node:fs/promises';

/** A Markdown table with a header row. */
export function markdownTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * Puts `block`, which begins with `start` and ends with `end`, where the block between those
 * markers stands in `path`, keeping the hand-written text around it; a file without one gets
 * `appended` (default: the block) at its end. A missing file starts as `missing` when given,
 * and is an error otherwise.
 */
export async function writeGeneratedBlock(
  path: string,
  markers: { readonly start: string; readonly end: string },
  block: string,
  options: { readonly missing?: string; readonly appended?: string } = {},
): Promise<void> {
  let doc: string;
  try {
    doc = await readFile(path, 'utf8');
  } catch (err) {
    if (options.missing === undefined) throw err;
    doc = options.missing;
  }
  const start = doc.indexOf(markers.start);
  const end = doc.indexOf(markers.end);
  const next =
    start >= 0 && end > start
      ? doc.slice(0, start) + block + doc.slice(end + markers.end.length)
      : `${doc.trimEnd()}\n\n${options.appended ?? block}\n`;
  await writeFile(path, next, 'utf8');
}
