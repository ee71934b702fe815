import type { GenerateResult } from '../result.js';
import type { TelemetryAttributes, TelemetryHistogram, TelemetryMeter } from './api.js';

// Bucket boundaries the GenAI conventions advise for each histogram.
const SECONDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKENS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

/** The GenAI client histograms, created once per client from the user's meter. */
export class GenAiMetrics {
  private readonly duration: TelemetryHistogram;
  private readonly tokens: TelemetryHistogram;
  private readonly firstChunk: TelemetryHistogram;
  private readonly perChunk: TelemetryHistogram;

  constructor(meter: TelemetryMeter) {
    this.duration = meter.createHistogram('gen_ai.client.operation.duration', {
      description: 'GenAI operation duration.',
      unit: 's',
      advice: { explicitBucketBoundaries: SECONDS },
    });
    this.tokens = meter.createHistogram('gen_ai.client.token.usage', {
      description: 'Number of input and output tokens used.',
      unit: '{token}',
      advice: { explicitBucketBoundaries: TOKENS },
    });
    this.firstChunk = meter.createHistogram('gen_ai.client.operation.time_to_first_chunk', {
      description: 'Time from issuing a streamed request to receiving its first chunk.',
      unit: 's',
      advice: { explicitBucketBoundaries: SECONDS },
    });
    this.perChunk = meter.createHistogram('gen_ai.client.operation.time_per_output_chunk', {
      description: 'Time between consecutive output chunks of a streamed request.',
      unit: 's',
      advice: { explicitBucketBoundaries: SECONDS },
    });
  }

  /**
   * One finished operation. Recorded once at its end from the result's own timings, so a request
   * adds nothing per token.
   */
  record(
    attributes: TelemetryAttributes,
    seconds: number,
    streaming: boolean,
    result: GenerateResult | undefined,
  ): void {
    this.duration.record(seconds, attributes);
    if (result === undefined) return;
    const { usage, timings } = result;
    if (usage.promptTokens !== undefined)
      this.tokens.record(usage.promptTokens, { ...attributes, 'gen_ai.token.type': 'input' });
    if (usage.completionTokens !== undefined)
      this.tokens.record(usage.completionTokens, { ...attributes, 'gen_ai.token.type': 'output' });
    // The conventions keep the chunk timings to streamed calls.
    if (!streaming) return;
    if (timings.timeToFirstTokenMs !== undefined)
      this.firstChunk.record(timings.timeToFirstTokenMs / 1000, attributes);
    for (const gap of timings.interTokenMs) this.perChunk.record(gap / 1000, attributes);
  }
}
