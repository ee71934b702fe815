import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SlicesJob } from '../../bench/overhead/client.js';
import { resultsMarkdown } from '../../bench/overhead/markdown.js';
import { type LineChild, startLineChild, startServerProcess } from '../../bench/overhead/processes.js';
import {
  alternate,
  geometricMean,
  pairRatio,
  quantile,
  readSideBySideConfig,
  roundOrder,
  roundsPerGeneration,
  SIDE_BY_SIDE_PAIRS,
  type SideBySideResults,
  sideBySidePlan,
  sideBySideRows,
  TurnFailure,
} from '../../bench/overhead/side-by-side.js';
import { checkTargets } from '../../bench/overhead/targets.js';
import { emptyResults } from './overhead-results.js';

const HERE = fileURLToPath(new URL('../../bench/overhead/', import.meta.url));

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('bench:overhead side by side', () => {
  it('runs 60 rounds of 32,000-token slices in 6 generations of processes at 64 and 512 streams unless told otherwise', () => {
    for (const name of [
      'BENCH_SIDE_LEVELS',
      'BENCH_SIDE_ROUNDS',
      'BENCH_SIDE_PROCESSES',
      'BENCH_SIDE_SLICE_TOKENS',
    ])
      vi.stubEnv(name, undefined);
    const defaults = readSideBySideConfig();
    expect(defaults).toEqual({ levels: [64, 512], rounds: 60, processes: 6, sliceTokens: 32_000 });
    expect(roundsPerGeneration(defaults)).toBe(10);
    vi.stubEnv('BENCH_SIDE_LEVELS', '0');
    vi.stubEnv('BENCH_SIDE_ROUNDS', '4');
    vi.stubEnv('BENCH_SIDE_PROCESSES', '3');
    const mine = readSideBySideConfig();
    expect(mine).toMatchObject({ levels: [], rounds: 4, processes: 3 });
    // Rounds that do not share out evenly are rounded up: no generation runs fewer than asked.
    expect(roundsPerGeneration(mine)).toBe(2);
    vi.stubEnv('BENCH_SIDE_ROUNDS', 'half');
    expect(() => readSideBySideConfig()).toThrow(/BENCH_SIDE_ROUNDS.*"half"/);
    vi.stubEnv('BENCH_SIDE_ROUNDS', '4');
    vi.stubEnv('BENCH_SIDE_PROCESSES', '0');
    expect(() => readSideBySideConfig()).toThrow(/BENCH_SIDE_PROCESSES.*"0"/);
  });

  it('keeps the pairs whose two clients both run, and starts the references first', () => {
    const plan = sideBySidePlan(['sdk-http', 'sdk-grpc-replicas', 'sdk-grpc', 'sdk-grpc-mux']);
    expect(plan.pairs.map(([v, ref]) => `${v}/${ref}`)).toEqual(['sdk-grpc-replicas/sdk-grpc']);
    expect(plan.variants).toEqual(['sdk-grpc', 'sdk-grpc-replicas']);
    // Without a baseline build, only the replica pairs run.
    const all = sideBySidePlan([
      'sdk-grpc',
      'sdk-grpc-replica-one',
      'sdk-grpc-replicas',
      'sdk-grpc-two-transports',
      'sdk-http',
    ]);
    expect(all.pairs).toHaveLength(3);
    expect(all.variants[0]).toBe('sdk-grpc');
    // The control: the same client in a second process, read against the first.
    expect(sideBySidePlan(['sdk-grpc-twin', 'sdk-grpc']).pairs.map(([v, ref]) => `${v}/${ref}`)).toEqual([
      'sdk-grpc-twin/sdk-grpc',
    ]);
    expect(sideBySidePlan(['sdk-grpc', 'sdk-grpc-baseline', 'sdk-http']).pairs).toEqual([
      SIDE_BY_SIDE_PAIRS.find(([v, ref]) => v === 'sdk-grpc' && ref === 'sdk-grpc-baseline'),
    ]);
  });

  it("gives a pair's ratio as the geometric mean of the rounds' ratios, its 95 % interval, and the rounds' quartiles", () => {
    const pair = SIDE_BY_SIDE_PAIRS.filter(([v]) => v === 'sdk-grpc-replicas').slice(0, 1);
    const slices = new Map([
      // Reference: 4, 2, 4 µs per token; the variant: 5, 2, 3 (ratios 1.25, 1, 0.75).
      [
        'sdk-grpc' as const,
        [
          { tokens: 100, cpuUs: 400 },
          { tokens: 100, cpuUs: 200 },
          { tokens: 200, cpuUs: 800 },
        ],
      ],
      [
        'sdk-grpc-replicas' as const,
        [
          { tokens: 100, cpuUs: 500 },
          { tokens: 200, cpuUs: 400 },
          { tokens: 100, cpuUs: 300 },
        ],
      ],
    ]);
    const [row] = sideBySideRows(64, pair, [slices]);
    // 1,200 µs over 400 tokens against 1,400 µs over 400 tokens.
    expect(row).toMatchObject({
      concurrency: 64,
      rounds: 3,
      processes: 1,
      cpuUsPerToken: 3,
      referenceCpuUsPerToken: 3.5,
    });
    // The rounds' ratios 1.25, 1 and 0.75: a slow round of the reference counts as much as a fast one.
    expect(row!.ratio).toBeCloseTo((1.25 * 1 * 0.75) ** (1 / 3), 12);
    const logs = [Math.log(1.25), 0, Math.log(0.75)];
    const mean = (logs[0]! + logs[2]!) / 3;
    const sd = Math.sqrt(logs.reduce((sum, x) => sum + (x - mean) ** 2, 0) / 2);
    expect(row!.interval[0]).toBeCloseTo(Math.exp(mean - (1.96 * sd) / Math.sqrt(3)), 12);
    expect(row!.interval[1]).toBeCloseTo(Math.exp(mean + (1.96 * sd) / Math.sqrt(3)), 12);
    expect(row!.roundRatios).toEqual([0.875, 1, 1.125]);
    // Rounds that agree give a narrow interval around their common ratio.
    const steady = geometricMean([1.02, 1.02, 1.02, 1.02]);
    expect(steady.ratio).toBeCloseTo(1.02, 12);
    expect(steady.interval[0]).toBeCloseTo(1.02, 12);
    expect(steady.interval[1]).toBeCloseTo(1.02, 12);
    expect(quantile([3, 1, 2, 4], 0.5)).toBe(2.5);
    // A pair with a side that measured nothing has no row.
    expect(sideBySideRows(64, pair, [new Map([['sdk-grpc', slices.get('sdk-grpc')!]])])).toEqual([]);
  });

  it("with several generations, gives the geometric mean of the generations' ratios and an interval from their spread", () => {
    const pair = SIDE_BY_SIDE_PAIRS.filter(([v]) => v === 'sdk-grpc-replicas').slice(0, 1);
    const reference = (n: number) => Array.from({ length: n }, () => ({ tokens: 100, cpuUs: 400 }));
    const variant = (...cpu: number[]) => cpu.map((cpuUs) => ({ tokens: 100, cpuUs }));
    // Three generations whose rounds agree within each but not across: 1.0 twice, 1.1 twice, 1.21 and 1.0.
    const generations = [
      new Map([
        ['sdk-grpc' as const, reference(2)],
        ['sdk-grpc-replicas' as const, variant(400, 400)],
      ]),
      new Map([
        ['sdk-grpc' as const, reference(2)],
        ['sdk-grpc-replicas' as const, variant(440, 440)],
      ]),
      new Map([
        ['sdk-grpc' as const, reference(2)],
        ['sdk-grpc-replicas' as const, variant(484, 400)],
      ]),
      // A generation in which the variant measured nothing counts for nothing.
      new Map([['sdk-grpc' as const, reference(2)]]),
    ];
    const [row] = sideBySideRows(512, pair, generations);
    expect(row).toMatchObject({
      rounds: 6,
      processes: 3,
      cpuUsPerToken: 2564 / 600,
      referenceCpuUsPerToken: 4,
    });
    // Each generation's geometric mean: 1, 1.1 and 1.1 (the square root of 1.21 * 1.0).
    const means = [0, Math.log(1.1), Math.log(1.1)];
    const mean = means.reduce((a, b) => a + b) / 3;
    const sd = Math.sqrt(means.reduce((sum, x) => sum + (x - mean) ** 2, 0) / 2);
    expect(row!.ratio).toBeCloseTo(Math.exp(mean), 12);
    // Student's t for 2 degrees of freedom at 97.5 %: 4.303 (from any table).
    expect(row!.interval[0]).toBeCloseTo(Math.exp(mean - (4.3027 * sd) / Math.sqrt(3)), 4);
    expect(row!.interval[1]).toBeCloseTo(Math.exp(mean + (4.3027 * sd) / Math.sqrt(3)), 4);
    // The same six rounds read as one generation give a narrower interval: a process's bias is left out.
    const pooled = geometricMean([1, 1, 1.1, 1.1, 1.21, 1]);
    expect(row!.interval[1] - row!.interval[0]).toBeGreaterThan(pooled.interval[1] - pooled.interval[0]);
    expect(pairRatio([[1.02, 1.02], [1.02]])).toEqual({ ratio: 1.02, interval: [1.02, 1.02] });
  });

  it('moves every process through every place of the order, forwards and backwards, in 2n rounds', () => {
    const order = ['a', 'b', 'c'];
    const rounds = Array.from({ length: 6 }, (_, r) => roundOrder(order, r));
    expect(rounds).toEqual([
      ['a', 'b', 'c'],
      ['b', 'c', 'a'],
      ['c', 'a', 'b'],
      ['c', 'b', 'a'],
      ['a', 'c', 'b'],
      ['b', 'a', 'c'],
    ]);
    // Each process is first, second and last twice; each runs right before each other one.
    for (const p of order) {
      for (let place = 0; place < 3; place++) expect(rounds.filter((r) => r[place] === p)).toHaveLength(2);
    }
    const justBefore = (x: string, y: string) =>
      rounds.filter((r) => r.indexOf(y) === r.indexOf(x) + 1).length;
    for (const x of order) for (const y of order) if (x !== y) expect(justBefore(x, y)).toBeGreaterThan(0);
    // The caller's list is left as it was.
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('judges balanced streams and the builds at 1.05x, shows the pairs that explain a gap, and prints them', () => {
    const row = (
      variant: 'sdk-grpc-replicas' | 'sdk-grpc-replica-one' | 'sdk-grpc',
      reference: 'sdk-grpc' | 'sdk-grpc-baseline',
      ratio: number,
    ) => ({
      variant,
      reference,
      label: SIDE_BY_SIDE_PAIRS.find(([v, ref]) => v === variant && ref === reference)![2],
      concurrency: 512,
      rounds: 30,
      processes: 5,
      cpuUsPerToken: 4 * ratio,
      referenceCpuUsPerToken: 4,
      ratio,
      interval: [ratio - 0.03, ratio + 0.03] as const,
      roundRatios: [ratio - 0.1, ratio, ratio + 0.1] as const,
    });
    const side: SideBySideResults = {
      levels: [512],
      rounds: 30,
      processes: 5,
      sliceTokens: 32_000,
      rows: [
        row('sdk-grpc-replica-one', 'sdk-grpc', 1.2),
        row('sdk-grpc-replicas', 'sdk-grpc', 1.06),
        row('sdk-grpc', 'sdk-grpc-baseline', 1.04),
      ],
    };
    const targets = checkTargets([], [], undefined, undefined, side);
    expect(targets.map((t) => [t.target, t.met])).toEqual([
      ["balanced over two addresses: CPU per token <= 1.05x one endpoint's (side by side)", false],
      ["CPU per token <= 1.05x the baseline build's (side by side)", true],
    ]);
    const text = resultsMarkdown({ ...emptyResults(), sideBySide: side, targets });
    expect(text).toContain('#### Side by side: pairs measured in alternation');
    expect(text).toContain(
      '| balanced over two addresses of the fake, against one endpoint | 1.060x (1.03-1.09; 4.24 / 4.00) |',
    );
    expect(text).toContain('starts afresh 5 times, 6 rounds each (30 in all)');
    // One process per client: the text says its interval leaves that process's bias out.
    expect(resultsMarkdown({ ...emptyResults(), sideBySide: { ...side, processes: 1 }, targets })).toContain(
      "One process per client ran all 30 rounds. A ratio is the geometric mean of the rounds' ratios",
    );
  });

  it('runs live clients in turns against a fake, each slice measured on its own', async () => {
    const server = await startServerProcess(join(HERE, 'fake-server.ts'), { ttftMs: 0, itlMs: 0 });
    const children = new Map<'sdk-grpc' | 'sdk-grpc-replicas', LineChild>();
    try {
      for (const variant of ['sdk-grpc', 'sdk-grpc-replicas'] as const) {
        const job: SlicesJob = {
          mode: 'slices',
          variant,
          grpcUrl: server.grpcUrl,
          httpUrl: server.httpUrl,
          concurrency: 4,
          requests: 6,
          maxTokens: 5,
          warmup: 2,
        };
        const child = startLineChild(
          [process.execPath, '--import', 'tsx', join(HERE, 'client.ts'), JSON.stringify(job)],
          {},
        );
        children.set(variant, child);
        expect(await child.next()).toEqual({ ready: true });
      }
      const slices = await alternate(children, 3);
      for (const variant of children.keys()) {
        const got = slices.get(variant)!;
        expect(got.map((s) => s.tokens)).toEqual([30, 30, 30]);
        for (const s of got) expect(s.cpuUs).toBeGreaterThan(0);
      }
      // A second generation goes on from round 3 (here with the same processes).
      const more = await alternate(children, 2, 3);
      expect(more.get('sdk-grpc')!.map((s) => s.tokens)).toEqual([30, 30]);
      const [row] = sideBySideRows(4, sideBySidePlan([...children.keys()]).pairs, [slices, more]);
      expect(row).toMatchObject({ rounds: 5, processes: 2 });
      expect(row!.ratio).toBeGreaterThan(0);
      expect(row!.interval[0]).toBeLessThanOrEqual(row!.ratio);
      expect(row!.interval[1]).toBeGreaterThanOrEqual(row!.ratio);
    } finally {
      await Promise.all([...children.values()].map((c) => c.end()));
      await server.stop();
    }
  }, 60_000);

  it('fails a turn with the client’s name and its own error when its process has died', async () => {
    // A job the client refuses: an unknown variant ends the process before it is ready.
    const child = startLineChild(
      [
        process.execPath,
        '--import',
        'tsx',
        join(HERE, 'client.ts'),
        JSON.stringify({ mode: 'slices', variant: 'nope' }),
      ],
      {},
    );
    await expect(child.next()).rejects.toThrow(/exited with 1:[\s\S]*unknown variant nope/);
    // A turn asked of it afterwards names the client and keeps the child's own words.
    const turn = alternate(new Map([['sdk-grpc-replicas', child]]), 1);
    await expect(turn).rejects.toBeInstanceOf(TurnFailure);
    await expect(turn).rejects.toThrow(
      /^sdk-grpc-replicas: Error: .*exited with 1:[\s\S]*unknown variant nope/,
    );
    await child.end();
  }, 30_000);
});
