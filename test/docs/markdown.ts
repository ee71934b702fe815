import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The Markdown a user reads: the README, docs/, every package's pages, and the READMEs under test/.
 * Fixture folders are skipped (their READMEs describe data, not the API).
 */
export function markdownFiles(): string[] {
  const found: string[] = ['README.md'];
  const walk = (dir: string, all: boolean): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!/^(node_modules|dist|fixtures|api)$/.test(entry.name)) walk(path, all);
      } else if (entry.name.endsWith('.md') && (all || entry.name === 'README.md')) {
        found.push(path);
      }
    }
  };
  walk('docs', true);
  for (const pkg of readdirSync(join(root, 'packages'))) {
    for (const file of readdirSync(join(root, 'packages', pkg))) {
      if (file.endsWith('.md')) found.push(join('packages', pkg, file));
    }
  }
  walk('test', false);
  return found.map((f) => relative(root, join(root, f))).sort();
}

/** A TypeScript code block of a Markdown file, as a user would copy it. */
export interface TsBlock {
  /** The Markdown file, relative to the repository. */
  readonly file: string;
  /** The 1-based line of the block's first code line (the one after the fence). */
  readonly line: number;
  readonly code: string;
  /** Marked `<!-- continues -->`: checked together with the blocks before it in the same file. */
  readonly continues: boolean;
  /** Marked `<!-- runs -->`: run against the fake Triton (its localhost URLs pointed at the fake). */
  readonly runs: boolean;
}

const FENCE = /^```(ts|typescript)\s*$/;

/**
 * Every ```ts / ```typescript block of a Markdown text, with the marks in the HTML comments on the
 * lines right above its fence (`<!-- runs -->`, `<!-- continues -->`, or both in one comment).
 * An unknown mark is an error, so a typo cannot silently leave a block unchecked.
 */
export function tsBlocks(file: string, text = readFileSync(join(root, file), 'utf8')): TsBlock[] {
  const lines = text.split('\n');
  const blocks: TsBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const opening = lines[i]!;
    if (/^```/.test(opening) && !FENCE.test(opening)) {
      // Another language's block: skip to its closing fence, so its content is never read as marks.
      const close = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
      i = close === -1 ? lines.length : close;
      continue;
    }
    if (!FENCE.test(opening)) continue;
    const marks = new Set<string>();
    for (let j = i - 1; j >= 0; j--) {
      const comment = /^<!--(.*)-->\s*$/.exec(lines[j]!.trim());
      if (!comment) break;
      for (const word of comment[1]!.trim().split(/\s+/)) {
        if (word === 'runs' || word === 'continues') marks.add(word);
        else if (!/^(quickstart:|default:|overhead-summary|validate-summary)/.test(word)) {
          throw new Error(`${file}:${j + 1}: unknown mark '${word}' above a TypeScript block`);
        }
      }
    }
    const close = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (close === -1) throw new Error(`${file}:${i + 1}: the TypeScript block is never closed`);
    blocks.push({
      file,
      line: i + 2,
      code: lines.slice(i + 1, close).join('\n'),
      continues: marks.has('continues'),
      runs: marks.has('runs'),
    });
    i = close;
  }
  return blocks;
}

/** A value quoted in prose, marked `<!-- default:NAME -->VALUE`. */
export interface DefaultMark {
  readonly file: string;
  readonly line: number;
  readonly name: string;
  /** The text right after the mark, up to the end of its number and unit (e.g. `330 s`, `8`). */
  readonly quoted: string;
}

/**
 * Every `<!-- default:NAME -->VALUE` of a Markdown text. VALUE is a number (digits, `,` or `_` between
 * them, a decimal point) with an optional unit right after it: `ms`, `s`, `min`, `KiB`, `MiB`, `GiB`,
 * or a word that counts (`3 attempts`, `8 connections`); or any text in backticks (`127.0.0.1`).
 */
export function defaultMarks(file: string, text = readFileSync(join(root, file), 'utf8')): DefaultMark[] {
  const marks: DefaultMark[] = [];
  const lines = text.split('\n');
  lines.forEach((content, index) => {
    for (const m of content.matchAll(
      /<!-- default:([\w.-]+) -->(?:`([^`]+)`|(\d[\d,_]*(?:\.\d+)?(?: ?[A-Za-z%]+)?))/g,
    )) {
      marks.push({ file, line: index + 1, name: m[1]!, quoted: (m[2] ?? m[3])! });
    }
  });
  return marks;
}

/**
 * The value of a quoted default in base units: milliseconds for times, bytes for sizes, the number
 * itself otherwise. `30 s` is 30000, `16 MiB` is 16777216, `8` is 8, `3 attempts` is 3.
 */
export function quotedValue(quoted: string): number {
  const m = /^(\d[\d,_]*(?:\.\d+)?)(?: ?([A-Za-z%]+))?$/.exec(quoted.trim());
  if (!m) throw new Error(`'${quoted}' is not a number with an optional unit`);
  const n = Number(m[1]!.replace(/[,_]/g, ''));
  const unit = m[2] ?? '';
  if (COUNTS.has(unit)) return n;
  const scale: Record<string, number> = {
    ms: 1,
    s: 1000,
    min: 60_000,
    h: 3_600_000,
    B: 1,
    KiB: 1024,
    MiB: 1024 ** 2,
    GiB: 1024 ** 3,
  };
  const factor = unit === '' ? 1 : scale[unit];
  if (factor === undefined) throw new Error(`'${quoted}': unknown unit '${unit}'`);
  return n * factor;
}

/** Words after a number that make it a plain count. */
const COUNTS = new Set([
  'attempts',
  'attempt',
  'connections',
  'connection',
  'calls',
  'failures',
  'failure',
  'tokens',
  'streams',
  'requests',
  'bytes',
  'per',
  'times',
]);
