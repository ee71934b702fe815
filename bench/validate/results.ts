import type { ClientPathRow } from './client-path.js';
import type { Comparison } from './compare.js';
import type { ServerName, ToolName, ValidateConfig } from './config.js';
import type { LevelFigures } from './figures.js';

/** A tool, or a whole server, that could not be measured, and why. */
export interface Skip {
  readonly what: string;
  readonly server?: ServerName;
  readonly tool?: ToolName;
  readonly concurrency?: number;
  readonly reason: string;
}

/** Everything `pnpm bench:validate` measured: bench/results/validate.json. */
export interface ValidateResults {
  readonly date: string;
  readonly machine: {
    readonly cpu: string;
    readonly cores: number;
    readonly node: string;
    readonly loadAverage: readonly number[];
  };
  readonly config: ValidateConfig & { readonly prompts: readonly string[] };
  readonly servers: Readonly<Partial<Record<ServerName, string>>>;
  readonly versions: Readonly<Record<string, string>>;
  readonly tokenizer: string;
  readonly figures: readonly LevelFigures[];
  /** genai-perf's own timestamps with one token per streamed response (see tools/genai-perf.ts). */
  readonly reconciled: readonly LevelFigures[];
  /** Our TTFT over the gRPC transport with a call per request and multiplexed (see client-path.ts). */
  readonly clientPath: readonly ClientPathRow[];
  readonly comparisons: readonly Comparison[];
  readonly skipped: readonly Skip[];
  readonly durationS: number;
}
