import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type OpenAiResults, openAiMarkdown } from '../../bench/openai/markdown.js';
import { resultsMarkdown } from '../../bench/overhead/markdown.js';
import type { OverheadResults } from '../../bench/overhead/results.js';
import { validationMarkdown } from '../../bench/validate/markdown.js';
import type { ValidateResults } from '../../bench/validate/results.js';
import { markdownFiles, root } from './markdown.js';

// docs/PERFORMANCE.md is a reference a user reads in five minutes (issue 54): short, with the current
// results as the benchmarks wrote them, and links that land. Its history stays in git.

const DOC = 'docs/PERFORMANCE.md';
const read = (file: string): string => readFileSync(join(root, file), 'utf8');
const saved = <T>(name: string): T => JSON.parse(read(`bench/results/${name}.json`)) as T;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(text: string): Set<string> {
  const found = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (heading?.[1] !== undefined) found.add(anchor(heading[1]));
  }
  return found;
}

describe('docs/PERFORMANCE.md', () => {
  const doc = read(DOC);

  it('is at most 400 lines', () => {
    expect(doc.split('\n').length).toBeLessThanOrEqual(400);
  });

  it('holds each generated block once, as its benchmark renders it from the saved results', () => {
    // A mismatch means the block was edited by hand or a renderer changed without a re-render:
    // `pnpm bench:overhead:render`, `VALIDATE_MARKDOWN_ONLY=1 pnpm bench:validate`,
    // `BENCH_OPENAI_MARKDOWN_ONLY=1 pnpm bench:openai`.
    const blocks = [
      resultsMarkdown(saved<OverheadResults>('overhead')),
      validationMarkdown(saved<ValidateResults>('validate')),
      openAiMarkdown(saved<OpenAiResults>('openai')),
    ];
    for (const block of blocks) {
      const start = block.split('\n')[0]!;
      expect(doc.split(start).length - 1, start).toBe(1);
      expect(doc).toContain(block);
    }
    // bench:replicas renders only from a run; its markers must stay for it to find.
    expect(doc).toMatch(
      /<!-- replicas-results:start \(written by pnpm bench:replicas[^>]*-->[\s\S]+<!-- replicas-results:end -->/,
    );
  });

  it('is linked to by anchors that exist, from itself and from every other page', () => {
    const targets = anchors(doc);
    const links: string[] = [];
    for (const file of markdownFiles()) {
      const text = read(file);
      const own = file === DOC;
      const pattern = own ? /\]\(#([^)\s]+)\)/g : /PERFORMANCE\.md#([^)\s]+)/g;
      for (const match of text.matchAll(pattern)) links.push(`${file} -> #${match[1]}`);
    }
    expect(links.length).toBeGreaterThan(0);
    const broken = links.filter((link) => !targets.has(link.slice(link.indexOf('#') + 1)));
    expect(broken).toEqual([]);
  });
});
