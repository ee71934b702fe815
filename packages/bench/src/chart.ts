import type { BenchReport, LevelReport } from './report.js';

const WIDTH = 760;
const HEIGHT = 460;
const M = { left: 76, right: 170, top: 48, bottom: 62 };
const PLOT_W = WIDTH - M.left - M.right;
const PLOT_H = HEIGHT - M.top - M.bottom;

interface Series {
  readonly name: string;
  readonly color: string;
  readonly latency: (l: LevelReport) => number | undefined;
}

// Throughput against the latency a user feels: end to end always, and first token when streaming.
const SERIES: readonly Series[] = [
  { name: 'end-to-end p50', color: '#1f77b4', latency: (l) => l.e2eMs?.p50 },
  { name: 'time to first token p50', color: '#d62728', latency: (l) => l.ttftMs?.p50 },
];

interface Point {
  readonly x: number;
  readonly y: number;
  readonly concurrency: number;
}

/**
 * An SVG line chart of output token throughput (y) against median latency (x), one point per
 * concurrency level, labelled with its concurrency: the usual way to read where adding load stops
 * buying throughput and starts costing latency.
 */
export function renderChartSvg(report: BenchReport): string {
  const lines = SERIES.map((s) => ({
    series: s,
    points: report.levels.flatMap((l): Point[] => {
      const x = s.latency(l);
      return x === undefined || l.completed === 0
        ? []
        : [{ x, y: l.outputTokenThroughput, concurrency: l.concurrency }];
    }),
  })).filter((line) => line.points.length > 0);
  const all = lines.flatMap((line) => line.points);
  const xTicks = ticks(Math.max(1, ...all.map((p) => p.x)));
  const yTicks = ticks(Math.max(1, ...all.map((p) => p.y)));
  const xMax = xTicks[xTicks.length - 1]!;
  const yMax = yTicks[yTicks.length - 1]!;
  const px = (x: number) => M.left + (x / xMax) * PLOT_W;
  const py = (y: number) => M.top + PLOT_H - (y / yMax) * PLOT_H;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    text(WIDTH / 2, 24, `Output tokens/s against latency: ${report.model} over ${report.protocol}`, {
      anchor: 'middle',
      size: 15,
    }),
  ];
  for (const t of xTicks) {
    out.push(line(px(t), M.top, px(t), M.top + PLOT_H, '#e5e5e5'));
    out.push(text(px(t), M.top + PLOT_H + 18, format(t), { anchor: 'middle' }));
  }
  for (const t of yTicks) {
    out.push(line(M.left, py(t), M.left + PLOT_W, py(t), '#e5e5e5'));
    out.push(text(M.left - 8, py(t) + 4, format(t), { anchor: 'end' }));
  }
  out.push(line(M.left, M.top + PLOT_H, M.left + PLOT_W, M.top + PLOT_H, '#333'));
  out.push(line(M.left, M.top, M.left, M.top + PLOT_H, '#333'));
  out.push(text(M.left + PLOT_W / 2, HEIGHT - 16, 'latency (ms)', { anchor: 'middle' }));
  out.push(
    `<text x="18" y="${M.top + PLOT_H / 2}" text-anchor="middle" transform="rotate(-90 18 ${M.top + PLOT_H / 2})">output tokens/s</text>`,
  );
  if (all.length === 0) {
    out.push(text(M.left + PLOT_W / 2, M.top + PLOT_H / 2, 'no successful requests', { anchor: 'middle' }));
  }
  lines.forEach(({ series, points }, i) => {
    const path = points.map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ');
    out.push(`<polyline points="${path}" fill="none" stroke="${series.color}" stroke-width="2"/>`);
    for (const p of points) {
      out.push(
        `<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="4" fill="${series.color}"/>`,
      );
      out.push(text(px(p.x) + 6, py(p.y) - 6, `c=${p.concurrency}`, { size: 11 }));
    }
    const ly = M.top + 10 + i * 20;
    out.push(line(M.left + PLOT_W + 16, ly, M.left + PLOT_W + 36, ly, series.color, 3));
    out.push(text(M.left + PLOT_W + 42, ly + 4, series.name, { size: 11 }));
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** Evenly spaced round ticks from 0 covering `max` (steps of 1, 2 or 5 times a power of ten). */
function ticks(max: number): number[] {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 5, 10].find((m) => m * power >= rough) ?? 10) * power;
  const out: number[] = [];
  for (let t = 0; t < max + step; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}

function format(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(3)));
}

function line(x1: number, y1: number, x2: number, y2: number, color: string, width = 1): string {
  return `<line x1="${x1.toFixed(1)}" y1="${y1.toFixed(1)}" x2="${x2.toFixed(1)}" y2="${y2.toFixed(1)}" stroke="${color}" stroke-width="${width}"/>`;
}

function text(x: number, y: number, s: string, o: { anchor?: string; size?: number } = {}): string {
  const anchor = o.anchor !== undefined ? ` text-anchor="${o.anchor}"` : '';
  const size = o.size !== undefined ? ` font-size="${o.size}"` : '';
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}"${anchor}${size}>${escapeXml(s)}</text>`;
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
