import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { describe, expect, test } from 'vitest';
import { LatencyHistogram } from '../src/metrics/latency-histogram.js';
import { readSamples, type Sample } from './prometheus-text.js';

const name = 'trtllm:inter_token_latency_seconds';
const help = 'Time between two streamed pieces of text of one choice.';
const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 1, 10];

/** Ours and prom-client's own histogram, each alone in a registry, fed the same observations. */
function pair() {
  const ours = new Registry();
  const reference = new Registry();
  const histogram = new LatencyHistogram({ name, help, buckets, registers: [ours] });
  const expected = new Histogram({ name, help, buckets, labelNames: ['model_name'], registers: [reference] });
  return {
    ours,
    reference,
    observe(model: string, seconds: number) {
      histogram.recorder(model).observe(seconds);
      expected.observe({ model_name: model }, seconds);
    },
  };
}

/** Samples in one order, whatever order a registry wrote them in. */
function sorted(samples: readonly Sample[]): Sample[] {
  const key = (s: Sample) => `${s.name} ${JSON.stringify(Object.entries(s.labels).sort())}`;
  return [...samples].sort((a, b) => key(a).localeCompare(key(b)));
}

// Values on every bound, between bounds, below the first and above the last, for two models.
function observations(): [string, number][] {
  const values = [0, 0.0004, ...buckets, ...buckets.map((b) => b * 1.5), 42];
  let seed = 7;
  for (let i = 0; i < 500; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    values.push((seed / 2 ** 31) ** 3 * 2);
  }
  return values.map((v, i) => [i % 3 === 0 ? 'llama' : 'ensemble', v]);
}

describe('LatencyHistogram', () => {
  test('scrapes as the same Prometheus text samples as prom-client’s Histogram fed the same values', async () => {
    const { ours, reference, observe } = pair();
    for (const [model, v] of observations()) observe(model, v);
    const text = await ours.metrics();
    expect(text).toContain(`# TYPE ${name} histogram`);
    expect(text).toContain(`# HELP ${name} ${help}`);
    const got = sorted(readSamples(text));
    expect(got.length).toBe(2 * (buckets.length + 3));
    expect(got).toEqual(sorted(readSamples(await reference.metrics())));
  });

  test('sums across workers as prom-client’s Histogram does (AggregatorRegistry, as --workers scrapes)', async () => {
    const workers = [pair(), pair()];
    const all = observations();
    for (const [i, [model, v]] of all.entries()) workers[i % 2]!.observe(model, v);
    const aggregate = async (pick: (w: ReturnType<typeof pair>) => Registry) =>
      sorted(
        readSamples(
          await AggregatorRegistry.aggregate(
            await Promise.all(workers.map((w) => pick(w).getMetricsAsJSON())),
          ).metrics(),
        ),
      );
    const got = await aggregate((w) => w.ours);
    expect(got.find((s) => s.name === `${name}_count` && s.labels.model_name === 'ensemble')?.value).toBe(
      all.filter(([m]) => m === 'ensemble').length,
    );
    expect(got).toEqual(await aggregate((w) => w.reference));
  });

  test('drops a value that is not a finite number instead of throwing from a response', async () => {
    const registry = new Registry();
    const histogram = new LatencyHistogram({ name, help, buckets, registers: [registry] });
    const recorder = histogram.recorder('ensemble');
    recorder.observe(0.002);
    expect(() => recorder.observe(Number.NaN)).not.toThrow();
    recorder.observe(Number.POSITIVE_INFINITY);
    const samples = readSamples(await registry.metrics());
    expect(samples.find((s) => s.name === `${name}_count`)?.value).toBe(1);
    expect(samples.find((s) => s.name === `${name}_sum`)?.value).toBe(0.002);
  });
});
