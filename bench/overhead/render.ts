/**
 * Rewrites the generated blocks of docs/PERFORMANCE.md and README.md from bench/results/overhead.json,
 * without running the benchmark (after a change to how the results are rendered).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeResultsMarkdown, writeSummaryMarkdown } from './markdown.js';
import type { OverheadResults } from './results.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const results = JSON.parse(
  await readFile(join(ROOT, 'bench', 'results', 'overhead.json'), 'utf8'),
) as OverheadResults;
await writeResultsMarkdown(join(ROOT, 'docs', 'PERFORMANCE.md'), results);
await writeSummaryMarkdown(join(ROOT, 'README.md'), results);
console.log('docs/PERFORMANCE.md and README.md rewritten from bench/results/overhead.json');
