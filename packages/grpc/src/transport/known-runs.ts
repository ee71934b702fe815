import type { ParameterValue } from '@trtllm/sdk/transport';
import { LENGTH_DELIMITED } from './wire-walker.js';

// The first byte of a ModelInferResponse `parameters` (4) and `outputs` (5) field.
export const PARAMETERS_KEY = (4 << 3) | LENGTH_DELIMITED;
export const OUTPUTS_KEY = (5 << 3) | LENGTH_DELIMITED;
// What a run of fields must stay under to be kept, and how many runs are kept.
const MAX_RUN_BYTES = 1024;
const MAX_RUNS = 4;

/** A run of parameter and output fields, and what reading it left in the reader's state. */
export interface KnownRun {
  readonly bytes: Buffer;
  readonly key: string | undefined;
  readonly value: ParameterValue | undefined;
  readonly names: readonly string[];
  readonly types: readonly string[];
  readonly shapes: readonly (readonly number[])[];
}

/**
 * The runs of `parameters` and `outputs` fields read last. Every response of a stream repeats
 * them byte for byte (the final flag, the names, data types and shapes of the outputs): a run
 * equal to a known one leaves the reader in the state it left it, so one compare of bytes stands
 * for a dozen field reads per token. Kept only where that state holds no object a response could
 * share with another (at most one parameter, shapes from the shared ones).
 */
export class KnownRuns {
  private readonly runs: KnownRun[] = [];
  private next = 0;

  find(buf: Buffer, at: number, end: number): KnownRun | undefined {
    for (let i = 0; i < this.runs.length; i++) {
      const run = this.runs[i]!;
      const n = run.bytes.length;
      if (at + n <= end && sameBytes(run.bytes, buf, at, n)) return run;
    }
    return undefined;
  }

  /** Keeps `buf[start..end)` and the state reading it left (the caller checks it may be shared). */
  add(buf: Buffer, start: number, end: number, state: Omit<KnownRun, 'bytes'>): void {
    if (end - start > MAX_RUN_BYTES) return;
    const run: KnownRun = { bytes: Buffer.from(buf.subarray(start, end)), ...state };
    if (this.runs.length < MAX_RUNS) this.runs.push(run);
    else {
      this.runs[this.next] = run;
      this.next = (this.next + 1) % MAX_RUNS;
    }
  }
}

// Runs of one stream differ first in their parameters (the final flag): those leading bytes are
// checked in JavaScript, so a run that does not match costs little.
const HEAD_BYTES = 32;

/**
 * `known` equals `buf[at..at+n)`. Past its head, Buffer#compare rather than a loop over bytes: a
 * run is about 150 bytes (four outputs and the final flag), long enough for the native compare to
 * beat a JavaScript loop (docs/PERFORMANCE.md), and it runs for every token.
 */
function sameBytes(known: Buffer, buf: Buffer, at: number, n: number): boolean {
  const head = Math.min(n, HEAD_BYTES);
  for (let i = 0; i < head; i++) if (known[i] !== buf[at + i]) return false;
  return head === n || buf.compare(known, head, n, at + head, at + n) === 0;
}
