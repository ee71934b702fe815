/**
 * `tsx bench/soak/render.ts`: the memory figures of bench/results/soak.json computed again from its
 * samples, and docs/soak.svg drawn again, without a new run.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type SoakPlotInput, soakPlot } from './plot.js';
import { memoryFigures } from './stats.js';

const results = fileURLToPath(new URL('../results/soak.json', import.meta.url));
const plot = fileURLToPath(new URL('../../docs/soak.svg', import.meta.url));
const run = JSON.parse(readFileSync(results, 'utf8')) as SoakPlotInput & {
  config: { minutes: number };
  summary: Record<string, unknown>;
};
const memory = memoryFigures(run.samples, run.config.minutes * 60);
const updated = { ...run, summary: { ...run.summary, ...memory } };
writeFileSync(results, `${JSON.stringify(updated, null, 1)}\n`);
writeFileSync(plot, soakPlot(updated));
process.stdout.write(`wrote ${results} and ${plot}\n`);
