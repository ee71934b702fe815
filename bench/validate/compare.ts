import type { ServerName } from './config.js';
import { type LevelFigures, METRICS, type MetricName } from './figures.js';

/** Which peer figures ours are compared with. */
export type PeerName = 'genai-perf' | 'perf_analyzer' | 'genai-perf, 1 token per response';

/** Ours against one peer on one metric at one level. */
export interface Comparison {
  readonly server: ServerName;
  readonly concurrency: number;
  readonly peer: PeerName;
  readonly metric: MetricName;
  readonly ours: number;
  readonly theirs: number;
  /** ours / theirs. */
  readonly ratio: number;
  /** |ratio - 1| above the tolerance. */
  readonly beyond: boolean;
  /** The peer's figure was computed here from its raw export, not reported by the peer itself. */
  readonly derived: boolean;
}

export function compare(
  ours: readonly LevelFigures[],
  peers: readonly { readonly peer: PeerName; readonly figures: LevelFigures }[],
  tolerance: number,
): Comparison[] {
  const out: Comparison[] = [];
  for (const { peer, figures: theirs } of peers) {
    const mine = ours.find((o) => o.server === theirs.server && o.concurrency === theirs.concurrency);
    if (mine === undefined) continue;
    for (const [metric, read] of METRICS) {
      const a = read(mine);
      const b = read(theirs);
      if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0)
        continue;
      const ratio = a / b;
      out.push({
        server: theirs.server,
        concurrency: theirs.concurrency,
        peer,
        metric,
        ours: a,
        theirs: b,
        ratio,
        beyond: Math.abs(ratio - 1) > tolerance,
        derived: theirs.derived?.includes(metric) ?? false,
      });
    }
  }
  return out;
}
