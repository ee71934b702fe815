/**
 * The side-by-side part of `pnpm bench:overhead` (issue 54 item 3, and its before/after): CPU per
 * token of clients that differ in one thing, measured in alternation. The throughput runs start a
 * process per run, one after another; on a shared machine one client's CPU per token moves by
 * ±20 % from one second to the next, so a ratio of two runs' medians cannot show 5 %. Here every
 * variant is one live process, warmed up once, and the processes take turns running a slice of
 * requests against the same fake, in an order that moves every round: load from elsewhere falls on
 * all of them alike. Each round gives a pair a ratio of two slices run next to each other; the
 * pair's ratio is their geometric mean (the host's slow and fast moments multiply a slice's cost,
 * and every round weighs alike), given with its 95 % interval: a round's ratio still moves a lot
 * on a shared machine, and the interval says how far a figure can be read (docs/PERFORMANCE.md).
 */
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
  /** Turns each process takes. `BENCH_SIDE_ROUNDS`, default 60. */
  readonly rounds: number;
  /** Tokens of one slice (at least two requests per stream). `BENCH_SIDE_SLICE_TOKENS`, default 32,000. */
  readonly sliceTokens: number;
}

export function readSideBySideConfig(): SideBySideConfig {
  return {
    levels: numbers('BENCH_SIDE_LEVELS', [64, 512]),
    rounds: whole('BENCH_SIDE_ROUNDS', 60),
    sliceTokens: whole('BENCH_SIDE_SLICE_TOKENS', 32_000),
  };
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

/** A pair at one level. */
export interface SideBySideRow {
  readonly variant: VariantName;
  readonly reference: VariantName;
  readonly label: string;
  readonly concurrency: number;
  readonly rounds: number;
  /** CPU (user + system) over tokens in all rounds, in µs. */
  readonly cpuUsPerToken: number;
  readonly referenceCpuUsPerToken: number;
  /** The geometric mean of the rounds' ratios (variant's slice against the reference's). */
  readonly ratio: number;
  /** The ratio's 95 % interval, from the spread of the rounds' ratios (log scale, normal). */
  readonly interval: readonly [number, number];
  /** The rounds' ratios: first quartile, median, third quartile. */
  readonly roundRatios: readonly [number, number, number];
}

export interface SideBySideResults {
  readonly levels: readonly number[];
  readonly rounds: number;
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

/** The rows of one level from every process's slices, round i of one beside round i of the other. */
export function sideBySideRows(
  concurrency: number,
  pairs: readonly (typeof SIDE_BY_SIDE_PAIRS)[number][],
  slices: ReadonlyMap<VariantName, readonly Slice[]>,
): SideBySideRow[] {
  const rows: SideBySideRow[] = [];
  for (const [variant, reference, label] of pairs) {
    const mine = slices.get(variant);
    const theirs = slices.get(reference);
    if (mine === undefined || theirs === undefined || mine.length === 0) continue;
    const rounds = Math.min(mine.length, theirs.length);
    const ratios = Array.from({ length: rounds }, (_, i) => perToken([mine[i]!]) / perToken([theirs[i]!]));
    const cpuUsPerToken = perToken(mine.slice(0, rounds));
    const referenceCpuUsPerToken = perToken(theirs.slice(0, rounds));
    rows.push({
      variant,
      reference,
      label,
      concurrency,
      rounds,
      cpuUsPerToken,
      referenceCpuUsPerToken,
      ...geometricMean(ratios),
      roundRatios: [quantile(ratios, 0.25), quantile(ratios, 0.5), quantile(ratios, 0.75)],
    });
  }
  return rows;
}

/** The geometric mean of `ratios` and its 95 % interval (the mean of their logarithms ± 1.96 standard errors). */
export function geometricMean(ratios: readonly number[]): {
  ratio: number;
  interval: readonly [number, number];
} {
  const logs = ratios.map(Math.log);
  const mean = logs.reduce((sum, x) => sum + x, 0) / logs.length;
  const variance =
    logs.length > 1 ? logs.reduce((sum, x) => sum + (x - mean) ** 2, 0) / (logs.length - 1) : Number.NaN;
  const half = 1.96 * Math.sqrt(variance / logs.length);
  return { ratio: Math.exp(mean), interval: [Math.exp(mean - half), Math.exp(mean + half)] };
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
 * Runs `rounds` rounds over live processes, a slice per process in {@link roundOrder}. A process
 * that fails throws a {@link TurnFailure}.
 */
export async function alternate(
  children: ReadonlyMap<VariantName, LineChild>,
  rounds: number,
): Promise<Map<VariantName, Slice[]>> {
  const order = [...children.keys()];
  const slices = new Map<VariantName, Slice[]>(order.map((v) => [v, []]));
  for (let round = 0; round < rounds; round++) {
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
