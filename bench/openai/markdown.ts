/**
 * The results block of `pnpm bench:openai` in docs/PERFORMANCE.md: each front end's own CPU per
 * streamed chunk at each level, beside the floors and the Rust peer, and the throughput part
 * (workers beside the peer on every CPU), from bench/results/openai.json.
 */
import { markdownTable as table, writeGeneratedBlock } from '../markdown.js';
import type { Machine } from '../overhead/machine.js';

const START = '<!-- openai-results:start (written by pnpm bench:openai; edits inside are lost) -->';
const END = '<!-- openai-results:end -->';

/** One front end at one level: medians over the repeats. */
export interface FrontEndFigures {
  readonly cpuUsPerChunk: number;
  readonly cpuUsPerChunkRuns: readonly number[];
  readonly systemUsPerChunk: number;
  readonly writesPerChunk?: number;
  readonly chunksPerSec: number;
  /** The front end's CPU over the window's wall time (absent from runs before 2026-11-29). */
  readonly coresBusy?: number;
}

/** What bench/openai/run.ts writes to bench/results/openai.json (the parts rendered here). */
export interface OpenAiResults {
  readonly machine: Machine;
  readonly settings: {
    readonly levels: readonly number[];
    readonly maxTokens: number;
    readonly chunksPerRun: number;
    readonly warmupRequests: number;
    readonly repeats: number;
  };
  /** Per level: `streams`, one entry per front end by its name, and the ratios. */
  readonly summary: readonly Readonly<Record<string, unknown> & { streams: number }>[];
  /**
   * The throughput part: each front end allowed `cpus` (every CPU), `trtllm-openai` with each count
   * of `workers`; per level, one entry per front end by its name.
   */
  readonly throughput?: {
    readonly cpus: string;
    readonly workers: readonly number[];
    readonly summary: readonly Readonly<Record<string, unknown> & { streams: number }>[];
  };
}

/** The table's name for each front end the bench starts; a baseline build keeps its own name. */
const LABELS: Readonly<Record<string, string>> = {
  'trtllm-openai': 'trtllm-openai',
  'node floor': 'node floor (node:http)',
  'net floor': 'net floor (node:net)',
  openai_trtllm: 'openai_trtllm (Rust peer)',
};

const RATIOS: readonly (readonly [string, string])[] = [
  ['oursOverPeer', 'ours / the peer'],
  ['oursOverFloor', 'ours / the node floor'],
  ['floorOverPeer', 'the node floor / the peer'],
  ['netFloorOverPeer', 'the net floor / the peer'],
];

const isFigures = (v: unknown): v is FrontEndFigures =>
  typeof v === 'object' && v !== null && 'cpuUsPerChunk' in v;

export function openAiMarkdown(r: OpenAiResults): string {
  const m = r.machine;
  const s = r.settings;
  const levels = r.summary.map((row) => row.streams);
  const names = [...new Set(r.summary.flatMap((row) => Object.keys(row).filter((k) => isFigures(row[k]))))];
  const at = (name: string, streams: number): FrontEndFigures | undefined => {
    const v = r.summary.find((row) => row.streams === streams)?.[name];
    return isFigures(v) ? v : undefined;
  };
  const each = (name: string, text: (f: FrontEndFigures) => string) =>
    levels.map((l) => {
      const f = at(name, l);
      return f === undefined ? '-' : text(f);
    });
  const figures = table(
    [
      'front end',
      ...levels.map((l) => `µs/chunk at ${l}, median (runs)`),
      `kernel µs/chunk at ${levels.join(' / ')}`,
      `writes per chunk at ${levels.join(' / ')}`,
    ],
    names.map((name) => [
      LABELS[name] ?? name,
      ...each(
        name,
        (f) => `${f.cpuUsPerChunk.toFixed(1)} (${f.cpuUsPerChunkRuns.map((v) => v.toFixed(1)).join(', ')})`,
      ),
      each(name, (f) => f.systemUsPerChunk.toFixed(1)).join(' / '),
      each(name, (f) => (f.writesPerChunk === undefined ? '-' : f.writesPerChunk.toFixed(2))).join(' / '),
    ]),
  );
  const ratios = RATIOS.filter(([key]) => r.summary.some((row) => typeof row[key] === 'number')).map(
    ([key, label]) =>
      `${label} ${r.summary.map((row) => (typeof row[key] === 'number' ? `${(row[key] as number).toFixed(2)}x` : '-')).join(' / ')}`,
  );
  const t = r.throughput;
  const wide =
    t === undefined
      ? []
      : [
          '',
          `Throughput on every core, a second part of the same run: each front end allowed CPUs ${t.cpus} ` +
            "(so the peer's tokio runs a thread per CPU, and `--workers N` forks N workers), the fake and the " +
            'load generator still on CPU 1 for all of them; streamed chunks per second, median (runs), with ' +
            "the front end's CPU per chunk (every process and thread) and the cores it kept busy: " +
            t.summary
              .map(
                (row, i) =>
                  `${i === 0 ? 'at' : 'At'} ${row.streams} streams ` +
                  Object.keys(row)
                    .filter((k) => isFigures(row[k]))
                    .map((name) => {
                      const f = row[name] as FrontEndFigures & { chunksPerSecRuns?: readonly number[] };
                      const runs = f.chunksPerSecRuns?.map((v) => v.toLocaleString('en-US')).join(', ');
                      return (
                        `${name} ${Math.round(f.chunksPerSec).toLocaleString('en-US')}` +
                        `${runs === undefined ? '' : ` (${runs})`}, ${f.cpuUsPerChunk.toFixed(1)} µs` +
                        `${f.coresBusy === undefined ? '' : `, ${f.coresBusy.toFixed(2)} cores`}`
                      );
                    })
                    .join('; '),
              )
              .join('. ') +
            '.',
        ];
  return [
    START,
    `Measured ${m.date.slice(0, 10)} on ${m.cpu}, ${m.cores} cores, Node ${m.node}; ` +
      (m.pinned
        ? 'the front ends pinned to CPU 0, the fake and the load generator to CPU 1. '
        : 'processes not pinned. ') +
      `${s.chunksPerRun.toLocaleString('en-US')} chunks per window (\`max_tokens\` ${s.maxTokens}) after ` +
      `${s.warmupRequests.toLocaleString('en-US')} warm-up requests, ${s.repeats} runs with the windows ` +
      "interleaved; µs of the front end's own CPU (user + system, all threads) per streamed chunk, its kernel " +
      'part, and write system calls per chunk:',
    '',
    figures,
    ...(ratios.length === 0 ? [] : ['', `At ${levels.join(' / ')} streams: ${ratios.join('; ')}.`]),
    ...wide,
    END,
  ].join('\n');
}

/** Replaces the block in `path` (or appends it), keeping the hand-written text around it. */
export function writeOpenAiMarkdown(path: string, r: OpenAiResults): Promise<void> {
  return writeGeneratedBlock(path, { start: START, end: END }, openAiMarkdown(r));
}
