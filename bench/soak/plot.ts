/**
 * The soak's chart as a standalone SVG: RSS, V8 heap used and external memory of the client over
 * time, the warm-up shaded and the RSS fit drawn. Hand-written: three polylines need no library.
 */
import { type GrowthFigures, leastSquares, type SoakSample } from './stats.js';

const W = 860;
const H = 380;
const PAD = { left: 64, right: 20, top: 44, bottom: 48 };
const MB = 2 ** 20;

interface Series {
  readonly label: string;
  readonly color: string;
  readonly value: (s: SoakSample) => number;
}

const SERIES: readonly Series[] = [
  { label: 'RSS', color: '#1f77b4', value: (s) => s.rss },
  { label: 'V8 heap used', color: '#d62728', value: (s) => s.heapUsed },
  { label: 'external + arrayBuffers', color: '#2ca02c', value: (s) => s.external },
];

function niceStep(span: number, ticks: number): number {
  const raw = span / ticks;
  const p = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 5, 10].find((m) => m * p >= raw) ?? 10) * p;
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The chart of a run: its samples, the RSS fit over those after `warmupSeconds`, the RSS before the client. */
export function soakSvg(
  samples: readonly SoakSample[],
  options: { title: string; warmupSeconds: number },
): string {
  const fittedSamples = samples.filter((s) => s.phase === 'load' && s.t >= options.warmupSeconds);
  const fit = leastSquares(
    fittedSamples.map((s) => s.t),
    fittedSamples.map((s) => s.rss),
  );
  const baselineRss = samples.filter((s) => s.phase === 'baseline').at(-1)?.rss;
  const load = samples.filter((s) => s.phase === 'load');
  const tMax = Math.max(...load.map((s) => s.t), 1);
  const minutes = tMax > 300;
  const tUnit = minutes ? 60 : 1;
  const yMaxMb = Math.max(...load.flatMap((s) => SERIES.map((k) => k.value(s)))) / MB;
  const yStep = niceStep(yMaxMb, 6);
  const yTop = Math.ceil(yMaxMb / yStep) * yStep;
  const xStep = niceStep(tMax / tUnit, 8);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (t: number) => PAD.left + (t / tMax) * plotW;
  const y = (bytes: number) => PAD.top + plotH - (bytes / MB / yTop) * plotH;
  const f = (v: number) => v.toFixed(1);

  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(options.title)}</text>`,
    `<rect x="${f(x(0))}" y="${PAD.top}" width="${f(x(options.warmupSeconds) - x(0))}" height="${plotH}" fill="#eee"/>`,
    `<text x="${f(x(0) + 4)}" y="${PAD.top + plotH - 6}" fill="#777">warm-up</text>`,
  );
  for (let v = 0; v <= yTop + 1e-9; v += yStep) {
    parts.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${f(y(v * MB))}" y2="${f(y(v * MB))}" stroke="#ddd"/>`,
      `<text x="${PAD.left - 6}" y="${f(y(v * MB) + 4)}" text-anchor="end">${Number(v.toPrecision(6))}</text>`,
    );
  }
  for (let v = 0; v <= tMax / tUnit + 1e-9; v += xStep) {
    parts.push(
      `<line x1="${f(x(v * tUnit))}" x2="${f(x(v * tUnit))}" y1="${PAD.top + plotH}" y2="${PAD.top + plotH + 4}" stroke="#333"/>`,
      `<text x="${f(x(v * tUnit))}" y="${PAD.top + plotH + 18}" text-anchor="middle">${Number(v.toPrecision(6))}</text>`,
    );
  }
  parts.push(
    `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${PAD.top + plotH}" y2="${PAD.top + plotH}" stroke="#333"/>`,
    `<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${PAD.top + plotH}" stroke="#333"/>`,
    `<text x="${PAD.left + plotW / 2}" y="${H - 10}" text-anchor="middle">${minutes ? 'minutes' : 'seconds'} of load</text>`,
    `<text transform="translate(16 ${PAD.top + plotH / 2}) rotate(-90)" text-anchor="middle">MiB</text>`,
  );
  for (const k of SERIES) {
    const points = load.map((s) => `${f(x(s.t))},${f(y(k.value(s)))}`).join(' ');
    parts.push(`<polyline fill="none" stroke="${k.color}" stroke-width="1.5" points="${points}"/>`);
  }
  const at = (t: number) => fit.intercept + fit.slope * t;
  parts.push(
    `<line x1="${f(x(options.warmupSeconds))}" y1="${f(y(at(options.warmupSeconds)))}" x2="${f(x(tMax))}" y2="${f(y(at(tMax)))}" stroke="#000" stroke-dasharray="5 4"/>`,
  );
  if (baselineRss !== undefined) {
    parts.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${f(y(baselineRss))}" y2="${f(y(baselineRss))}" stroke="${SERIES[0]!.color}" stroke-dasharray="2 3"/>`,
      `<text x="${W - PAD.right - 4}" y="${f(y(baselineRss) - 4)}" text-anchor="end" fill="#555">RSS before the client was made</text>`,
    );
  }
  const legend = [...SERIES.map((k) => ({ label: k.label, color: k.color, dash: '' }))];
  legend.push({ label: 'RSS fit after warm-up', color: '#000', dash: '5 4' });
  legend.forEach((item, i) => {
    const lx = PAD.left + 10 + i * 190;
    parts.push(
      `<line x1="${lx}" x2="${lx + 22}" y1="34" y2="34" stroke="${item.color}" stroke-width="2"${item.dash ? ` stroke-dasharray="${item.dash}"` : ''}/>`,
      `<text x="${lx + 27}" y="38">${esc(item.label)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** What the chart needs of bench/results/soak.json. */
export interface SoakPlotInput {
  readonly config: { readonly streams: number; readonly minutes: number };
  readonly summary: { readonly rss: GrowthFigures };
  readonly samples: readonly SoakSample[];
}

/** docs/soak.svg of a run. */
export function soakPlot(result: SoakPlotInput): string {
  const { config, summary } = result;
  return soakSvg(result.samples, {
    title: `TritonLlm over gRPC, ${config.streams} streams for ${config.minutes} min: RSS ${summary.rss.percentPerHour.toFixed(2)} %/h after warm-up`,
    warmupSeconds: summary.rss.warmupSeconds,
  });
}
