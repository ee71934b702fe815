/** `tsx bench/soak/render.ts`: docs/soak.svg again from bench/results/soak.json, without a new run. */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type SoakPlotInput, soakPlot } from './plot.js';

const results = fileURLToPath(new URL('../results/soak.json', import.meta.url));
const plot = fileURLToPath(new URL('../../docs/soak.svg', import.meta.url));
writeFileSync(plot, soakPlot(JSON.parse(readFileSync(results, 'utf8')) as SoakPlotInput));
process.stdout.write(`wrote ${plot}\n`);
