/** The figures of a soak run, from its samples. Pure functions, so a unit test can check them. */

/** One look at the client process. */
export interface SoakSample {
  /** Seconds since the load started (negative for the baseline, before it). */
  readonly t: number;
  readonly phase: 'baseline' | 'load' | 'closed';
  readonly rss: number;
  readonly heapUsed: number;
  /** `external + arrayBuffers` of process.memoryUsage(). */
  readonly external: number;
  /** process.getActiveResourcesInfo().length. */
  readonly handles: number;
  /** Entries of /proc/self/fd (-1 where there is no /proc). */
  readonly fds: number;
  /** Requests ended so far, by how they ended. */
  readonly completed: number;
  readonly aborted: number;
  readonly broken: number;
  readonly stopped: number;
  readonly tokens: number;
  /** Client CPU (user + system) since the load started, in microseconds. */
  readonly cpuUs: number;
  readonly failures: number;
  /** Seconds from start to end, and to the first chunk, summed over the requests ended so far. */
  readonly requestSeconds: number;
  readonly firstChunkSeconds: number;
  /** The transport's connectionStats() under load (0 outside it). */
  readonly connections: number;
  readonly openStreams: number;
  readonly waitingStreams: number;
}

/** Least-squares line through (x, y): slope and intercept. */
export function leastSquares(
  xs: readonly number[],
  ys: readonly number[],
): { slope: number; intercept: number; slopeStderr: number } {
  const n = xs.length;
  if (n < 2 || ys.length !== n) throw new Error(`least squares needs at least two points (got ${n})`);
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += xs[i]!;
    my += ys[i]!;
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i]! - mx;
    sxy += dx * (ys[i]! - my);
    sxx += dx * dx;
  }
  if (sxx === 0) throw new Error('least squares needs at least two distinct x values');
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  let residuals = 0;
  for (let i = 0; i < n; i++) residuals += (ys[i]! - intercept - slope * xs[i]!) ** 2;
  // Exact for independent errors; samples a few seconds apart are not, so it is a lower bound.
  const slopeStderr = n > 2 ? Math.sqrt(residuals / (n - 2) / sxx) : Number.NaN;
  return { slope, intercept, slopeStderr };
}

export interface GrowthFigures {
  /** Samples fitted: those of the load after the warm-up. */
  readonly samples: number;
  readonly warmupSeconds: number;
  /** Slope of the fit, in bytes per hour. */
  readonly bytesPerHour: number;
  /** The slope over the fit's value at the warm-up's end, in % per hour. */
  readonly percentPerHour: number;
  /** The fit's standard error, in % per hour (a lower bound: neighbouring samples are not independent). */
  readonly stderrPercentPerHour: number;
  readonly max: number;
  /**
   * The lowest sample in each tenth of the load (after what GC frees, the floor a leak raises), and
   * the least-squares slope through the floors of the tenths after the warm-up, in % per hour.
   */
  readonly floors: readonly number[];
  readonly floorsPercentPerHour: number;
}

/**
 * Growth of one series after the warm-up (the first `warmupFraction` of the load's duration): the
 * least-squares slope over the remaining samples, relative to the fitted level where they start.
 */
export function growthAfterWarmup(
  samples: readonly SoakSample[],
  pick: (s: SoakSample) => number,
  loadSeconds: number,
  warmupFraction = 0.1,
): GrowthFigures {
  const load = samples.filter((s) => s.phase === 'load');
  const warmupSeconds = loadSeconds * warmupFraction;
  const fitted = load.filter((s) => s.t >= warmupSeconds);
  const { slope, intercept, slopeStderr } = leastSquares(
    fitted.map((s) => s.t),
    fitted.map(pick),
  );
  const bytesPerHour = slope * 3600;
  const level = intercept + slope * warmupSeconds;
  const tenths = Array.from({ length: 10 }, (_, i) =>
    load.filter((s) => s.t >= (i * loadSeconds) / 10 && s.t < ((i + 1) * loadSeconds) / 10),
  );
  const floors = tenths.map((w) => (w.length > 0 ? Math.min(...w.map(pick)) : Number.NaN));
  const floorPoints = floors
    .map((floor, i) => ({ t: ((i + 0.5) * loadSeconds) / 10, floor }))
    .filter((p) => p.t >= warmupSeconds && !Number.isNaN(p.floor));
  const floorFit =
    floorPoints.length >= 2
      ? leastSquares(
          floorPoints.map((p) => p.t),
          floorPoints.map((p) => p.floor),
        )
      : undefined;
  return {
    samples: fitted.length,
    warmupSeconds,
    bytesPerHour,
    percentPerHour: (100 * bytesPerHour) / level,
    stderrPercentPerHour: (100 * slopeStderr * 3600) / level,
    max: Math.max(...load.map(pick)),
    floors,
    floorsPercentPerHour:
      floorFit === undefined
        ? Number.NaN
        : (100 * floorFit.slope * 3600) / (floorFit.intercept + floorFit.slope * warmupSeconds),
  };
}

/** The growth figures of the three memory series. */
export function memoryFigures(
  samples: readonly SoakSample[],
  loadSeconds: number,
): { rss: GrowthFigures; heapUsed: GrowthFigures; external: GrowthFigures } {
  return {
    rss: growthAfterWarmup(samples, (s) => s.rss, loadSeconds),
    heapUsed: growthAfterWarmup(samples, (s) => s.heapUsed, loadSeconds),
    external: growthAfterWarmup(samples, (s) => s.external, loadSeconds),
  };
}
