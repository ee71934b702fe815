/**
 * Settings of the overhead benchmark, each overridable by an environment variable so that a quick
 * run (or a longer, steadier one) needs no code change.
 */
export interface OverheadConfig {
  /** Concurrent streams of the throughput runs. `BENCH_LEVELS`, default `1,64,512`. */
  readonly levels: readonly number[];
  /** Concurrent idle streams of the memory runs. `BENCH_MEMORY_LEVELS`, default `1000,10000`. */
  readonly memoryLevels: readonly number[];
  /**
   * Tokens each throughput run aims at (at least two requests per stream are sent). `BENCH_TOKENS`,
   * default 64000: a fast client streams 8,000 tokens in a tenth of a second, a window in which JIT
   * warm-up and the first collections weigh more than streaming does.
   */
  readonly tokens: number;
  /** `max_tokens` of every request. `BENCH_MAX_TOKENS`, default 32. */
  readonly maxTokens: number;
  /** Runs of each variant at each level, interleaved; the report takes the medians. `BENCH_REPEATS`, default 3. */
  readonly repeats: number;
  /**
   * Runs of each variant at each memory level, interleaved; the report takes the medians.
   * `BENCH_MEMORY_REPEATS`, default 3. One run's RSS growth at 1,000 streams moves by a few KB per
   * stream from run to run (the same build measured 5.7 to 8.0 KB five times in a row, its heap 4.3
   * to 4.5; 3.9 to 5.9 with the young generation left out, see client.ts), enough to turn a 12 KB
   * target from missed to met between two published runs.
   */
  readonly memoryRepeats: number;
  /**
   * Unmeasured requests Python tritonclient and perf_analyzer send first (connection, schema).
   * `BENCH_WARMUP`, default 100: neither compiles as it runs, and their cost per token is the same
   * over 8,000 tokens as over 64,000.
   */
  readonly warmup: number;
  /**
   * Unmeasured requests each Node client sends first. `BENCH_NODE_WARMUP`, default 8000. V8
   * optimizes a function only after many calls, and code that runs once per request (encoding a
   * request, parsing an answer's head) gets there after thousands of requests; it also grows its
   * young generation to the load. Measured on this bench's 2-core machine, the SDK's CPU per token
   * kept falling until about the 2,000th request over gRPC and the 2,500th over HTTP at 64
   * streams (over HTTP at 512 streams, the 5,500th); 100 warm-up requests measured mostly that.
   * On Node 24 (`--trace-opt`, gRPC at 64 streams) the SDK's once-per-request functions
   * (`Generation`, `buildResult`, `generationResult`, `wantedOutputs`, the transport's `open`) reach
   * TurboFan between the 4,000th and the 5,000th request, so a window right after 4,000 still
   * measured their last compiles: 4.8-6.4 µs per token against 3.5 after 8,000, the socket probe
   * 4.0 either way. The cost of the warm-up window is reported beside the measured one.
   */
  readonly nodeWarmup: number;
  /** Variants to run, by name. `BENCH_VARIANTS`, default all. */
  readonly variants: readonly string[];
  /** Pin the server to CPU 0 and each client to CPU 1 with taskset. `BENCH_PIN`, default 1 when taskset exists. */
  readonly pin: boolean;
  /** Skip the Python tritonclient (no venv is made). `BENCH_SKIP_PYTHON=1`. */
  readonly skipPython: boolean;
}

export const ALL_VARIANTS = [
  'connect-bare',
  'grpc-js-bare',
  'http2-bare',
  'socket-probe',
  'socket-probe-mux',
  'socket-probe-iter',
  'http-probe',
  'sdk-grpc',
  'sdk-grpc-baseline',
  'sdk-grpc-young',
  'sdk-grpc-mux',
  'sdk-grpc-mux-baseline',
  'sdk-grpc-replicas',
  'sdk-grpc-replicas-baseline',
  'sdk-grpc-replica-one',
  'sdk-grpc-two-transports',
  'sdk-grpc-twin',
  'sdk-http',
  'sdk-http-baseline',
  'python-tritonclient',
  'perf-analyzer',
] as const;

export type VariantName = (typeof ALL_VARIANTS)[number];

/** Human names, for tables. */
export const VARIANT_LABELS: Readonly<Record<VariantName, string>> = {
  'connect-bare': 'bare @connectrpc/connect-node',
  'grpc-js-bare': 'bare @grpc/grpc-js',
  'http2-bare': 'bare node:http2 (field walker)',
  'socket-probe': 'probe: HTTP/2 frames read in JS from node:net',
  'socket-probe-mux': 'probe: the same, requests on 32 shared calls',
  'socket-probe-iter': 'probe: the same, tokens through an async iterator',
  'http-probe': 'probe: HTTP/1.1 SSE read in JS from node:net',
  'sdk-grpc': 'TritonLlm over gRPC',
  'sdk-grpc-baseline': 'TritonLlm over gRPC, baseline build (BENCH_BASELINE)',
  'sdk-grpc-young': 'TritonLlm over gRPC, larger young generation (--max-semi-space-size)',
  'sdk-grpc-mux': 'TritonLlm over gRPC (multiplex)',
  'sdk-grpc-mux-baseline': 'TritonLlm over gRPC (multiplex), baseline build (BENCH_BASELINE)',
  'sdk-grpc-replicas': 'TritonLlm over gRPC, balanced over two addresses of the server (baseUrls)',
  'sdk-grpc-replicas-baseline':
    'TritonLlm over gRPC, balanced over two addresses, baseline build (BENCH_BASELINE)',
  'sdk-grpc-replica-one': 'TritonLlm over gRPC, through the replica transport with one address (baseUrls)',
  'sdk-grpc-two-transports':
    'two TritonLlm over gRPC, each its own transport to the server, requests to the one with fewer in flight',
  'sdk-grpc-twin': 'TritonLlm over gRPC, the same client in a process of its own (side by side only)',
  'sdk-http': 'TritonLlm over HTTP SSE',
  'sdk-http-baseline': 'TritonLlm over HTTP SSE, baseline build (BENCH_BASELINE)',
  'python-tritonclient': 'Python tritonclient (gRPC stream)',
  'perf-analyzer': 'perf_analyzer (C++, gRPC streams)',
};

export const BARE_VARIANTS: readonly VariantName[] = ['connect-bare', 'grpc-js-bare', 'http2-bare'];

/**
 * A comma-separated list of whole numbers >= 1 from the environment. Where `zeroSkips`, `0` is the empty list (the
 * part it configures is skipped); elsewhere it is refused like any other value below 1.
 */
export function list(name: string, fallback: readonly number[], zeroSkips = false): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  if (zeroSkips && raw.trim() === '0') return [];
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (values.some((v) => !Number.isSafeInteger(v) || v < 1)) {
    const what = zeroSkips ? '0 or a comma-separated list' : 'a comma-separated list';
    throw new Error(`${name} must be ${what} of whole numbers >= 1 (got ${JSON.stringify(raw)})`);
  }
  return values;
}

/** {@link list} for the optional parts of the run, which `0` skips. */
export function numbers(name: string, fallback: readonly number[]): number[] {
  return list(name, fallback, true);
}

/** A whole number >= `min` from the environment, or `fallback` when unset. */
export function whole(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const v = Number(raw);
  if (!Number.isSafeInteger(v) || v < min) {
    throw new Error(`${name} must be a whole number >= ${min} (got ${JSON.stringify(raw)})`);
  }
  return v;
}

export function readConfig(hasTaskset: boolean): OverheadConfig {
  // The baseline build runs only when there is one to load; the larger young generation belongs to
  // the stream-limit part (see stream-limit.ts), which runs it beside the default path when asked.
  const defaults = ALL_VARIANTS.filter(
    (v) => (!v.endsWith('-baseline') || process.env.BENCH_BASELINE !== undefined) && v !== 'sdk-grpc-young',
  );
  const variants = (process.env.BENCH_VARIANTS ?? defaults.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const unknown = variants.filter((v) => !(ALL_VARIANTS as readonly string[]).includes(v));
  if (unknown.length > 0) {
    throw new Error(`BENCH_VARIANTS: unknown ${unknown.join(', ')}; known: ${ALL_VARIANTS.join(', ')}`);
  }
  const baselines = variants.filter((v) => v.endsWith('-baseline'));
  if (baselines.length > 0 && process.env.BENCH_BASELINE === undefined) {
    throw new Error(
      `${baselines.join(', ')} needs BENCH_BASELINE: the root of a built checkout to compare with`,
    );
  }
  const skipPython = process.env.BENCH_SKIP_PYTHON === '1';
  return {
    levels: list('BENCH_LEVELS', [1, 64, 512]),
    memoryLevels: list('BENCH_MEMORY_LEVELS', [1000, 10000]),
    tokens: whole('BENCH_TOKENS', 64_000),
    maxTokens: whole('BENCH_MAX_TOKENS', 32),
    repeats: whole('BENCH_REPEATS', 3),
    memoryRepeats: whole('BENCH_MEMORY_REPEATS', 3),
    warmup: whole('BENCH_WARMUP', 100, 0),
    nodeWarmup: whole('BENCH_NODE_WARMUP', 8000, 0),
    variants: skipPython ? variants.filter((v) => v !== 'python-tritonclient') : variants,
    pin: hasTaskset && process.env.BENCH_PIN !== '0',
    skipPython,
  };
}

/** Variants that are not Node processes, and so not compiled as they run. */
const NOT_NODE: readonly string[] = ['python-tritonclient', 'perf-analyzer'];

/** Unmeasured requests a variant sends before its measured window. */
export function warmupFor(config: OverheadConfig, variant: string): number {
  return NOT_NODE.includes(variant) ? config.warmup : config.nodeWarmup;
}

/** Requests of one throughput run: enough for the token target, and at least two per stream. */
export function requestsFor(config: OverheadConfig, concurrency: number): number {
  return Math.max(Math.ceil(config.tokens / config.maxTokens), 2 * concurrency);
}

/** The prompts every variant sends, in the same order. */
export const PROMPTS: readonly string[] = [
  'What is ML?',
  'Hello world',
  'What is machine learning?',
  'Models learn patterns from data',
];
