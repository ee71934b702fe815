import { TritonLlmError } from '@trtllm/sdk';
import { Counter, Gauge, Registry } from 'prom-client';
import type { OpenAiUsage } from '../wire.js';
import { LatencyHistogram, type LatencyRecorder } from './latency-histogram.js';

/**
 * The prefix of every metric. The suffixes are vLLM's where vLLM has the metric
 * (`vllm:time_to_first_token_seconds` is `trtllm:time_to_first_token_seconds`), so a vLLM
 * dashboard carries over by changing the prefix.
 */
export const METRIC_PREFIX = 'trtllm:';

// vLLM's buckets, with the low end extended: a gateway in front of a fast engine sees
// millisecond token gaps that vLLM's 10 ms floor would put in one bucket.
const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640,
];
const ITL_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20,
  40, 80,
];
const E2E_BUCKETS = [
  0.01, 0.05, 0.1, 0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920,
  7680,
];

/** The label of the model a request named; vLLM calls it `model_name`. */
type ModelLabel = 'model_name';

/** A gateway's Prometheus instruments, in a registry of its own (two servers in one process do not collide). */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'model_name' | 'endpoint' | 'status'>;
  private readonly running: Gauge<ModelLabel>;
  private readonly errors: Counter<'model_name' | 'code'>;
  private readonly promptTokens: Counter<ModelLabel>;
  private readonly generationTokens: Counter<ModelLabel>;
  private readonly ttft: LatencyHistogram;
  private readonly itl: LatencyHistogram;
  private readonly e2e: LatencyHistogram;
  /** Each served model's instruments, bound to its label once (models are the few the gateway serves). */
  private readonly perModel = new Map<string, ModelInstruments>();

  constructor(queueLength: () => number) {
    const registers = [this.registry];
    const p = METRIC_PREFIX;
    this.requests = new Counter({
      name: `${p}http_requests_total`,
      help: 'API requests answered, by model, endpoint and HTTP status (499: the client left first).',
      labelNames: ['model_name', 'endpoint', 'status'],
      registers,
    });
    this.running = new Gauge({
      name: `${p}num_requests_running`,
      help: 'Generation requests in flight (holding a concurrency slot).',
      labelNames: ['model_name'],
      registers,
    });
    new Gauge({
      name: `${p}num_requests_waiting`,
      help: 'Generation requests waiting for a concurrency slot.',
      registers,
      collect() {
        this.set(queueLength());
      },
    });
    this.errors = new Counter({
      name: `${p}request_errors_total`,
      help: 'Requests that ended in an error, by the error code (TritonLlmError codes).',
      labelNames: ['model_name', 'code'],
      registers,
    });
    this.promptTokens = new Counter({
      name: `${p}prompt_tokens_total`,
      help: 'Prompt tokens of finished requests, as reported in usage.',
      labelNames: ['model_name'],
      registers,
    });
    this.generationTokens = new Counter({
      name: `${p}generation_tokens_total`,
      help: 'Generated tokens of finished requests, as reported in usage.',
      labelNames: ['model_name'],
      registers,
    });
    this.ttft = new LatencyHistogram({
      name: `${p}time_to_first_token_seconds`,
      help: 'Time from the request reaching the gateway to its first streamed token.',
      buckets: TTFT_BUCKETS,
      registers,
    });
    this.itl = new LatencyHistogram({
      name: `${p}inter_token_latency_seconds`,
      help: 'Time between two streamed pieces of text of one choice.',
      buckets: ITL_BUCKETS,
      registers,
    });
    this.e2e = new LatencyHistogram({
      name: `${p}e2e_request_latency_seconds`,
      help: 'Time from the request reaching the gateway to its response ending.',
      buckets: E2E_BUCKETS,
      registers,
    });
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  /** Counts one answered API request. */
  answered(model: string, endpoint: string, status: number): void {
    this.requests.inc({ model_name: model, endpoint, status: String(status) });
  }

  /** Counts one error by its code. */
  failed(model: string, err: unknown): void {
    this.errors.inc({ model_name: model, code: TritonLlmError.from(err, 'internal').code });
  }

  /** Starts the meter of one generation request that arrived at `arrived` (`performance.now()`). */
  begin(model: string, arrived: number): RequestMeter {
    let instruments = this.perModel.get(model);
    if (instruments === undefined) {
      instruments = {
        running: this.running.labels(model),
        ttft: this.ttft.recorder(model),
        itl: this.itl.recorder(model),
        e2e: this.e2e.recorder(model),
        prompt: this.promptTokens.labels(model),
        generation: this.generationTokens.labels(model),
        failed: (err) => this.failed(model, err),
      };
      this.perModel.set(model, instruments);
    }
    return new RequestMeter(model, arrived, instruments);
  }
}

interface ModelInstruments {
  readonly running: { inc(): void; dec(): void };
  /** Counts an error that ended the request after its response began (a stream's error event). */
  readonly failed: (err: unknown) => void;
  readonly ttft: LatencyRecorder;
  readonly itl: LatencyRecorder;
  readonly e2e: LatencyRecorder;
  readonly prompt: { inc(value: number): void };
  readonly generation: { inc(value: number): void };
}

/** One generation request's timings and tokens, as the endpoint reports them. */
export class RequestMeter {
  private first = true;
  /** When each choice last streamed text. */
  private readonly lastDelta: number[] = [];
  private ended = false;

  constructor(
    readonly model: string,
    private readonly start: number,
    private readonly instruments: ModelInstruments,
  ) {
    instruments.running.inc();
  }

  /** Counts an error that ended the request after its response began (a stream's error event). */
  error(err: unknown): void {
    this.instruments.failed(err);
  }

  /** A choice streamed a piece of text. */
  delta(choice: number): void {
    const now = performance.now();
    if (this.first) {
      this.first = false;
      this.instruments.ttft.observe((now - this.start) / 1000);
    }
    const last = this.lastDelta[choice];
    if (last !== undefined) this.instruments.itl.observe((now - last) / 1000);
    this.lastDelta[choice] = now;
  }

  /** The request's token counts. */
  usage(usage: OpenAiUsage): void {
    this.instruments.prompt.inc(usage.prompt_tokens);
    this.instruments.generation.inc(usage.completion_tokens);
  }

  /** The response ended (or the client left); later calls do nothing. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.instruments.running.dec();
    this.instruments.e2e.observe((performance.now() - this.start) / 1000);
  }
}
