import type { ServerName } from '../config.js';
import type { LevelFigures } from '../figures.js';
import type { Peers } from '../peers.js';
import type { PromptFiles } from '../prompts.js';

/** Everything a tool needs to measure one server. */
export interface ToolContext {
  readonly root: string;
  readonly server: ServerName;
  /** gRPC `host:port` of the server. */
  readonly grpcAddress: string;
  readonly model: string;
  readonly maxTokens: number;
  readonly files: PromptFiles;
  /** Where the tool writes its exports (one directory per server). */
  readonly workDir: string;
  readonly peers: Peers;
  /** A local Hugging Face tokenizer directory (genai-perf must count tokens with one). */
  readonly tokenizerDir: string;
}

/** One measured level: closed loop at `concurrency`, `warmup` unmeasured requests, then `requests`. */
export interface LevelJob {
  readonly concurrency: number;
  readonly requests: number;
  readonly warmup: number;
}

export interface ToolResult {
  readonly figures: LevelFigures;
  /**
   * The same run's raw timestamps with one output token per streamed response (the server's
   * count) instead of the tool's own count: shows how much of a difference is token counting.
   */
  readonly reconciled?: LevelFigures;
}

export type ToolRunner = (ctx: ToolContext, job: LevelJob) => Promise<ToolResult>;
