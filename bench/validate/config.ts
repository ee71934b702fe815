/**
 * Settings of `pnpm bench:validate`, each overridable by an environment variable, so that a quick
 * look (or a longer, steadier run) needs no code change.
 */
export const TOOLS = ['trtllm-bench', 'genai-perf', 'perf_analyzer'] as const;
export type ToolName = (typeof TOOLS)[number];

export const SERVERS = ['fake', 'triton'] as const;
export type ServerName = (typeof SERVERS)[number];

export interface ValidateConfig {
  /** Concurrency levels, run in order. `VALIDATE_LEVELS`, default `1,4,16`. */
  readonly levels: readonly number[];
  /** Measured requests per level: at least this many, and at least eight per slot. `VALIDATE_REQUESTS`, default 40. */
  readonly requests: number;
  /** `max_tokens` of every request. `VALIDATE_MAX_TOKENS`, default 32. */
  readonly maxTokens: number;
  /**
   * Time to first token both servers inject. `VALIDATE_TTFT_MS`, default 200: a loopback gRPC round
   * trip between two Node processes costs 1.5-2 ms on this machine, more than 2 % of 50 ms.
   */
  readonly ttftMs: number;
  /** Time between tokens both servers inject. `VALIDATE_ITL_MS`, default 10. */
  readonly itlMs: number;
  /** Which servers to measure. `VALIDATE_SERVERS`, default `fake,triton`. */
  readonly servers: readonly ServerName[];
  /** Which tools to run. `VALIDATE_TOOLS`, default all three. */
  readonly tools: readonly ToolName[];
  /** Differences beyond this fraction are flagged and explained. */
  readonly tolerance: number;
}

function numbers(name: string, fallback: readonly number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (values.some((v) => !Number.isSafeInteger(v) || v < 1)) {
    throw new Error(`${name} must be comma-separated whole numbers >= 1 (got ${JSON.stringify(raw)})`);
  }
  return values;
}

function whole(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const v = Number(raw);
  if (!Number.isSafeInteger(v) || v < min) {
    throw new Error(`${name} must be a whole number >= ${min} (got ${JSON.stringify(raw)})`);
  }
  return v;
}

function names<T extends string>(name: string, known: readonly T[]): T[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...known];
  const picked = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const unknown = picked.filter((s) => !(known as readonly string[]).includes(s));
  if (unknown.length > 0)
    throw new Error(`${name}: unknown ${unknown.join(', ')}; known: ${known.join(', ')}`);
  return known.filter((k) => picked.includes(k));
}

export function readConfig(): ValidateConfig {
  return {
    levels: numbers('VALIDATE_LEVELS', [1, 4, 16]),
    requests: whole('VALIDATE_REQUESTS', 40, 2),
    maxTokens: whole('VALIDATE_MAX_TOKENS', 32, 2),
    ttftMs: whole('VALIDATE_TTFT_MS', 200, 0),
    itlMs: whole('VALIDATE_ITL_MS', 10, 0),
    servers: names('VALIDATE_SERVERS', SERVERS),
    tools: names('VALIDATE_TOOLS', TOOLS),
    tolerance: 0.05,
  };
}

/**
 * Measured requests at a level: the configured floor, or eight rounds of the slots when more, so
 * that the burst of the first round weighs little.
 */
export function requestsAt(config: ValidateConfig, concurrency: number): number {
  return Math.max(config.requests, 8 * concurrency);
}

/** Unmeasured requests before each level: two rounds of the slots, at least eight (a fresh Node process JIT-compiles). */
export function warmupAt(concurrency: number): number {
  return Math.max(8, 2 * concurrency);
}

/** The prompts every tool sends, in this order (what each one generates differs, see GENERATOR.md). */
export const PROMPTS: readonly string[] = [
  'What is ML?',
  'Hello world',
  'What is machine learning?',
  'Models learn patterns from data',
];
