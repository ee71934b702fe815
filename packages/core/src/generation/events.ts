import type { TritonLlmError } from '../errors.js';
import type { GenerateResult } from '../result.js';

/** Lifecycle events for logging, metrics and tracing hooks. */
export type GenerationEvent =
  | {
      readonly type: 'request';
      readonly requestId: string;
      readonly model: string;
      readonly streaming: boolean;
    }
  | {
      /**
       * An attempt failed before any response and another starts after `delayMs`: on the same
       * target, or at once on another replica (`moved`).
       */
      readonly type: 'retry';
      readonly requestId: string;
      readonly model: string;
      /** The attempt about to start, from 2; moves to another replica count too. */
      readonly attempt: number;
      readonly delayMs: number;
      /** The attempt goes to another replica of a replica transport. */
      readonly moved: boolean;
      readonly error: TritonLlmError;
    }
  | {
      readonly type: 'response';
      readonly requestId: string;
      readonly model: string;
      readonly elapsedMs: number;
    }
  | {
      readonly type: 'end';
      readonly requestId: string;
      readonly model: string;
      readonly result: GenerateResult;
    }
  | {
      readonly type: 'error';
      readonly requestId: string;
      readonly model: string;
      readonly error: TritonLlmError;
    };
