/**
 * The side-by-side part of `pnpm bench:overhead` (issue 54 item 3, and its before/after): CPU per
 * token of clients that differ in one thing, measured in alternation. The throughput runs start a
 * process per run, one after another; on a shared machine one client's CPU per token moves by
 * ±20 % from one second to the next, so a ratio of two runs' medians cannot show 5 %. Here every
 * variant is a live process, warmed up before its turns, and the processes take turns running a
 * slice of requests against the same fake, in an order that moves every round: load from elsewhere
 * falls on all of them alike. Each round gives a pair a ratio of two slices run next to each other.
 *
 * A process also keeps a bias of its own through all its rounds (where its code and heap landed,
 * what its JIT chose): two processes of one client can differ by more than an interval built from
 * the rounds allows for (figures in the docs). So the set of processes starts afresh several
 * times per level (a generation each), the rounds shared out among them, and a pair's ratio is
 * the geometric mean of its generations' ratios, with a 95 % interval from their spread
 * (Student's t): it then counts a process's bias as the noise it is (docs/PERFORMANCE.md).
 */
import jstat from 'jstat';
import { numbers, type VariantName, whole } from './config.js';
import type { LineChild } from './processes.js';

/** Variant against reference: what each pair tells apart. */
export const SIDE_BY_SIDE_PAIRS: readonly (readonly [VariantName, VariantName, string])[] = [
  // Two processes of one client: how far from 1 a pair lands when nothing differs.
  ['sdk-grpc-twin', 'sdk-grpc', 'the same client in two processes (control)'],
  ['sdk-grpc-replica-one', 'sdk-grpc', 'the replica transport over one address, against one endpoint'],
  ['sdk-grpc-replicas', 'sdk-grpc', 'balanced over two addresses of the fake, against one endpoint'],
  ['sdk-grpc-two-transports', 'sdk-grpc', 'two plain transports (no replica code), against one endpoint'],
  ['sdk-grpc', 'sdk-grpc-baseline', 'gRPC, this build against the baseline build'],
  ['sdk-grpc-mux', 'sdk-grpc-mux-baseline', 'multiplex, this build against the baseline build'],
  ['sdk-grpc-replicas', 'sdk-grpc-replicas-baseline', 'balanced, this build against the baseline build'],
  ['sdk-http', 'sdk-http-baseline', 'HTTP SSE, this build against the baseline build'],
];

export interface SideBySideConfig {
  /** Concurrent streams. `BENCH_SIDE_LEVELS`, default `64,512`; `0` skips the part. */
  readonly levels: readonly number[];
  /** Turns each variant takes, all generations together. `BENCH_SIDE_ROUNDS`, default 60. */
  readonly rounds: number;
  /**
   * Generations: how many times each variant's process starts afresh at a level, the rounds
   * shared out among them. `BENCH_SIDE_PROCESSES`, default 6; 1 keeps one process per variant (the
   * interval then comes from the rounds and leaves out a process's bias).
   */
  readonly processes: number;
  /** Tokens of one slice (at least two requests per stream). `BENCH_SIDE_SLICE_TOKENS`, default 32,000. */
  readonly sliceTokens: number;
}

export function readSideBySideConfig(): SideBySideConfig {
  return {
    levels: numbers('BENCH_SIDE_LEVELS', [64, 512]),
    rounds: whole('BENCH_SIDE_ROUNDS', 60),
    processes: whole('BENCH_SIDE_PROCESSES', 6),
    sliceTokens: whole('BENCH_SIDE_SLICE_TOKENS', 32_000),
  };
}

/** Rounds of each generation: the rounds shared out, rounded up. */
export function roundsPerGeneration(config: SideBySideConfig): number {
  return Math.ceil(config.rounds / config.processes);
}

/** The pairs whose two variants both run, and the variants they need (references first). */
export function sideBySidePlan(runVariants: readonly VariantName[]): {
  pairs: (typeof SIDE_BY_SIDE_PAIRS)[number][];
  variants: VariantName[];
} {
  const pairs = SIDE_BY_SIDE_PAIRS.filter(([v, ref]) => runVariants.includes(v) && runVariants.includes(ref));
  const variants: VariantName[] = [];
  for (const [, ref] of pairs) if (!variants.includes(ref)) variants.push(ref);
  for (const [v] of pairs) if (!variants.includes(v)) variants.push(v);
  return { pairs, variants };
}

/** One slice of one process: what client.ts `slices` prints. */
export interface Slice {
  readonly tokens: number;
  readonly cpuUs: number;
}

/** What each variant's process measured in one generation, round by round. */
export type Generation = ReadonlyMap<VariantName, readonly Slice[]>;

/** A pair at one level. */
export interface SideBySideRow {
  readonly variant: VariantName;
  readonly reference: VariantName;
  readonly label: string;
  readonly concurrency: number;
  /** Rounds both sides ran, all generations together. */
  readonly rounds: number;
  /** Generations in which both sides ran. */
  readonly processes: number;
  /** CPU (user + system) over tokens in all rounds, in µs. */
  readonly cpuUsPerToken: number;
  readonly referenceCpuUsPerToken: number;
  /** The geometric mean of the generations' ratios, each the geometric mean of its rounds' ratios. */
  readonly ratio: number;
  /** The ratio's 95 % interval (see {@link pairRatio}). */
  readonly interval: readonly [number, number];
  /** The rounds' ratios: first quartile, median, third quartile. */
  readonly roundRatios: readonly [number, number, number];
}

export interface SideBySideResults {
  readonly levels: readonly number[];
  readonly rounds: number;
  readonly processes: number;
  readonly sliceTokens: number;
  readonly rows: readonly SideBySideRow[];
}

const perToken = (s: readonly Slice[]): number =>
  s.reduce((sum, x) => sum + x.cpuUs, 0) / s.reduce((sum, x) => sum + x.tokens, 0);

/** Quantile `q` of `values` by linear interpolation between the closest ranks. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (at - low);
}

/**
 * The rows of one level: in each generation, round i of one side beside round i of the other. A
 * pair that no generation measured on both sides has no row.
 */
export function sideBySideRows(
  concurrency: number,
  pairs: readonly (typeof SIDE_BY_SIDE_PAIRS)[number][],
  generations: readonly Generation[],
): SideBySideRow[] {
  const rows: SideBySideRow[] = [];
  for (const [variant, reference, label] of pairs) {
    const ratios: number[][] = [];
    const mineAll: Slice[] = [];
    const theirsAll: Slice[] = [];
    for (const generation of generations) {
      const mine = generation.get(variant) ?? [];
      const theirs = generation.get(reference) ?? [];
      const rounds = Math.min(mine.length, theirs.length);
      if (rounds === 0) continue;
      ratios.push(Array.from({ length: rounds }, (_, i) => perToken([mine[i]!]) / perToken([theirs[i]!])));
      mineAll.push(...mine.slice(0, rounds));
      theirsAll.push(...theirs.slice(0, rounds));
    }
    if (ratios.length === 0) continue;
    const all = ratios.flat();
    rows.push({
      variant,
      reference,
      label,
      concurrency,
      rounds: all.length,
      processes: ratios.length,
      cpuUsPerToken: perToken(mineAll),
      referenceCpuUsPerToken: perToken(theirsAll),
      ...pairRatio(ratios),
      roundRatios: [quantile(all, 0.25), quantile(all, 0.5), quantile(all, 0.75)],
    });
  }
  return rows;
}

/**
 * A pair's ratio from its rounds' ratios, grouped by generation: the geometric mean of the
 * generations' geometric means, with a 95 % interval from the spread of those means (Student's t
 * with one degree of freedom fewer than generations), so a process's bias widens it. With one
 * generation, there is no such spread: the interval comes from the rounds ({@link geometricMean}).
 */
export function pairRatio(generations: readonly (readonly number[])[]): {
  ratio: number;
  interval: readonly [number, number];
} {
  if (generations.length === 1) return geometricMean(generations[0]!);
  const means = generations.map((ratios) => meanAndSd(ratios.map(Math.log)).mean);
  const { mean, sd } = meanAndSd(means);
  const half = (jstat.jStat.studentt.inv(0.975, means.length - 1) * sd) / Math.sqrt(means.length);
  return { ratio: Math.exp(mean), interval: [Math.exp(mean - half), Math.exp(mean + half)] };
}

/** The geometric mean of `ratios` and its 95 % interval (the mean of their logarithms ± 1.96 standard errors). */
export function geometricMean(ratios: readonly number[]): {
  ratio: number;
  interval: readonly [number, number];
} {
  const { mean, sd } = meanAndSd(ratios.map(Math.log));
  const half = (1.96 * sd) / Math.sqrt(ratios.length);
  return { ratio: Math.exp(mean), interval: [Math.exp(mean - half), Math.exp(mean + half)] };
}

/** Mean and sample standard deviation (NaN for one value). */
function meanAndSd(values: readonly number[]): { mean: number; sd: number } {
  const mean = values.reduce((sum, x) => sum + x, 0) / values.length;
  const variance =
    values.length > 1
      ? values.reduce((sum, x) => sum + (x - mean) ** 2, 0) / (values.length - 1)
      : Number.NaN;
  return { mean, sd: Math.sqrt(variance) };
}

/** A client process failed its warm-up or a turn: which one, and why. */
export class TurnFailure extends Error {
  constructor(
    readonly variant: VariantName,
    cause: unknown,
  ) {
    super(`${variant}: ${String(cause)}`, { cause });
  }
}

/**
 * The processes' order in round `round`: the list rotated by one more place each round, and
 * reversed every other cycle of rotations. Every process takes every place, after every other
 * one, equally often: a fixed order (even reversed every round) left the reference, always at an
 * end, costlier than the same client in the second place (the control pair; figures in the docs).
 */
export function roundOrder<T>(order: readonly T[], round: number): T[] {
  const n = order.length;
  const shift = round % n;
  const rotated = [...order.slice(shift), ...order.slice(0, shift)];
  return Math.floor(round / n) % 2 === 0 ? rotated : rotated.reverse();
}

/**
 * Runs `rounds` rounds over live processes, a slice per process in {@link roundOrder}, numbered
 * from `first` (a later generation goes on with the order where the one before it stopped). A
 * process that fails throws a {@link TurnFailure}.
 */
export async function alternate(
  children: ReadonlyMap<VariantName, LineChild>,
  rounds: number,
  first = 0,
): Promise<Map<VariantName, Slice[]>> {
  const order = [...children.keys()];
  const slices = new Map<VariantName, Slice[]>(order.map((v) => [v, []]));
  for (let round = first; round < first + rounds; round++) {
    for (const variant of roundOrder(order, round)) {
      try {
        slices.get(variant)!.push(await children.get(variant)!.ask<Slice>('slice'));
      } catch (err) {
        throw new TurnFailure(variant, err);
      }
    }
  }
  return slices;
}
