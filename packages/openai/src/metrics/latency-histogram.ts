import { Histogram, type Registry } from 'prom-client';

/** What prom-client's histograms answer to `get()`: the scrape renders it, `--workers` sums it. */
type Snapshot = Awaited<ReturnType<Histogram<'model_name'>['get']>>;

/** Where one model's latencies go: one call per observation, nothing looked up. */
export interface LatencyRecorder {
  observe(seconds: number): void;
}

/** One model's series: a count per bucket (not cumulative), the sum and the count. */
class Series implements LatencyRecorder {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly model: string,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(seconds: number): void {
    // A clock read gone wrong must not end a response: prom-client would throw; the sample is dropped.
    if (!Number.isFinite(seconds)) return;
    const bounds = this.bounds;
    // The first bucket whose bound the value does not exceed, as prom-client's own histogram picks.
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        this.counts[i]! += 1;
        break;
      }
    }
    this.sum += seconds;
    this.count += 1;
  }
}

/**
 * A prom-client histogram with one label, `model_name`, for the latencies a gateway records per
 * streamed token. prom-client's `labels(model).observe(v)` turns the labels into a key and checks
 * them on every call; here a model's series is found once per request ({@link recorder}) and an
 * observation is a bucket search and three additions. It is a `Histogram`, registered as one, and
 * answers `get()` (the scrape and the workers' aggregation read that) in prom-client's own shape,
 * so the exposition text and `--workers` sums are those of prom-client's histogram. Record only
 * through {@link recorder}: the base class's `observe` and `labels` write where `get()` does not read.
 */
export class LatencyHistogram extends Histogram<'model_name'> {
  private readonly bounds: readonly number[];
  private readonly series = new Map<string, Series>();
  private readonly metricName: string;
  private readonly metricHelp: string;

  constructor(config: {
    readonly name: string;
    readonly help: string;
    readonly buckets: readonly number[];
    readonly registers: Registry[];
  }) {
    super({ ...config, buckets: [...config.buckets], labelNames: ['model_name'] });
    this.bounds = [...config.buckets].sort((a, b) => a - b);
    this.metricName = config.name;
    this.metricHelp = config.help;
  }

  /** The series of `model`, made on first use and kept (models are the few the gateway serves). */
  recorder(model: string): LatencyRecorder {
    let series = this.series.get(model);
    if (series === undefined) {
      series = new Series(model, this.bounds);
      this.series.set(model, series);
    }
    return series;
  }

  override async get(): Promise<Snapshot> {
    const name = this.metricName;
    const bucket = `${name}_bucket`;
    const values: Snapshot['values'] = [];
    for (const s of this.series.values()) {
      // Prometheus buckets are cumulative: each counts every value at or below its bound.
      let below = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        below += s.counts[i]!;
        values.push({ metricName: bucket, labels: withLe(s.model, this.bounds[i]!), value: below });
      }
      values.push({ metricName: bucket, labels: withLe(s.model, '+Inf'), value: s.count });
      values.push({ metricName: `${name}_sum`, labels: { model_name: s.model }, value: s.sum });
      values.push({ metricName: `${name}_count`, labels: { model_name: s.model }, value: s.count });
    }
    // The cast: prom-client declares `type` as an enum and `collect` as required, while its own
    // histograms answer the string 'histogram' and no `collect`, which is what its registry reads.
    const snapshot = { name, help: this.metricHelp, type: 'histogram', values, aggregator: 'sum' };
    return snapshot as unknown as Snapshot;
  }

  /** prom-client's registry renders this method's answer when a metric has it, else `get()`'s. */
  getForPromString(): Promise<Snapshot> {
    return this.get();
  }
}

/** A bucket's labels: the model and the bound (`le`), which prom-client's label types do not name. */
function withLe(model: string, le: number | string): Record<string, string | number> {
  return { model_name: model, le };
}
