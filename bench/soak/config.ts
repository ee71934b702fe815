/**
 * Settings of the soak benchmark. Each has an environment variable (and the duration a flag too), so
 * a short trial and the hour-long run use the same code.
 */
import { parseArgs } from 'node:util';

export interface SoakConfig {
  /** Minutes of load. `--minutes` or `BENCH_SOAK_MINUTES`, default 10. */
  readonly minutes: number;
  /** Concurrent streams, each a closed loop of requests. `BENCH_SOAK_STREAMS`, default 512. */
  readonly streams: number;
  /** Seconds between two samples of the client's memory and handles. `BENCH_SOAK_SAMPLE_SECONDS`, default 5. */
  readonly sampleSeconds: number;
  /**
   * The fake's milliseconds between tokens. `BENCH_SOAK_ITL_MS`, default 50: 512 streams then ask for
   * up to 10,000 tokens/s, which keeps the client busy at every turn of its event loop while client and
   * fake together stay well under one core of a machine shared with other work.
   */
  readonly itlMs: number;
  /** The fake's milliseconds before each first token. `BENCH_SOAK_TTFT_MS`, default 20. */
  readonly ttftMs: number;
  /** Seed of the request mix (prompts, lengths, how each request ends). `BENCH_SOAK_SEED`, default 1. */
  readonly seed: number;
}

function number(name: string, fallback: number, min: number, integer: boolean): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min || (integer && !Number.isSafeInteger(v))) {
    throw new Error(
      `${name} must be a ${integer ? 'whole ' : ''}number >= ${min} (got ${JSON.stringify(raw)})`,
    );
  }
  return v;
}

export function readSoakConfig(argv: readonly string[]): SoakConfig {
  const { values } = parseArgs({ args: [...argv], options: { minutes: { type: 'string' } } });
  if (values.minutes !== undefined) process.env.BENCH_SOAK_MINUTES = values.minutes;
  return {
    minutes: number('BENCH_SOAK_MINUTES', 10, 0.1, false),
    streams: number('BENCH_SOAK_STREAMS', 512, 1, true),
    sampleSeconds: number('BENCH_SOAK_SAMPLE_SECONDS', 5, 0.5, false),
    itlMs: number('BENCH_SOAK_ITL_MS', 50, 0, false),
    ttftMs: number('BENCH_SOAK_TTFT_MS', 20, 0, false),
    seed: number('BENCH_SOAK_SEED', 1, 0, true),
  };
}
