/**
 * The deterministic generator of GENERATOR.md, as pure functions: tests compute the outputs they
 * expect from the same rules the fake (and the real Triton's Python stand-in) follow.
 */
import { decode, END_ID, encode } from './vocabulary.js';

/** The text the generator walks through; every output is a window of its token ids. */
export const CORPUS =
  ' Machine learning is a field of study in artificial intelligence. 机器学习让计算机从数据中学习。 Models learn patterns from data 🤖 and make predictions.';

/** encode(CORPUS). */
export const CORPUS_IDS: readonly number[] = encode(CORPUS);

/**
 * Where the corpus's sentences start in {@link CORPUS_IDS}: 0, and every position after a token
 * that ends a sentence (`.` or `。`). Every reply starts at one of them, so it reads as text.
 */
export const SENTENCE_STARTS: readonly number[] = CORPUS_IDS.flatMap((_, i) =>
  i === 0 || /[.。]$/u.test(decode(CORPUS_IDS.slice(0, i))) ? [i] : [],
);

/** Why a sequence ended. `stopped` (in-band stop) and `cancelled` only happen on a running server. */
export type FinishReason = 'stop' | 'length' | 'stopped' | 'cancelled';

/** The options of one generation, named as in the model tensors. */
export interface GenerateOptions {
  /** `request_output_len` / `max_tokens`. */
  readonly maxTokens: number;
  /** Default 2. */
  readonly endId?: number;
  /** `min_tokens` (`min_length` before 2026). Default 0. */
  readonly minTokens?: number;
  /** Each word an id sequence; a match ends the sequence and stays in the output. */
  readonly stopWords?: readonly (readonly number[])[];
  /** Each word an id sequence that the output never ends with. */
  readonly badWords?: readonly (readonly number[])[];
  /** `seed` (`random_seed` before 2026), a UINT64. Default 0. */
  readonly seed?: number | bigint;
  /** Default 1; above 1 each beam is a sequence. */
  readonly beamWidth?: number;
  /** Default 1; used when `beamWidth` is 1. */
  readonly numReturnSequences?: number;
  /** Log probs are zeros unless true. */
  readonly returnLogProbs?: boolean;
  /**
   * GENERATOR.md "Scripted output": every sequence is encode(script) instead of the corpus, cut at
   * `maxTokens`; `endId`, `minTokens`, stop and bad words and `seed` do not apply.
   */
  readonly script?: string;
}

/** One generated sequence: its index `k`, the ids (input excluded), and their log probs. */
export interface GeneratedSequence {
  readonly index: number;
  readonly tokens: readonly number[];
  readonly logProbs: readonly number[];
  readonly cumLogProb: number;
  readonly finishReason: FinishReason;
}

/** The log prob GENERATOR.md assigns to a token. */
export function tokenLogProb(token: number): number {
  return -(1 + (token % 7)) / 8;
}

/** How many sequences a request produces: beams when `beamWidth > 1`, else `numReturnSequences`. */
export function sequenceCount(options: Pick<GenerateOptions, 'beamWidth' | 'numReturnSequences'>): number {
  const beams = options.beamWidth ?? 1;
  return beams > 1 ? beams : Math.max(1, options.numReturnSequences ?? 1);
}

function endsWith(output: readonly number[], word: readonly number[]): boolean {
  if (word.length === 0 || word.length > output.length) return false;
  const offset = output.length - word.length;
  for (let i = 0; i < word.length; i++) {
    if (output[offset + i] !== word[i]) return false;
  }
  return true;
}

function startOffset(inputIds: readonly number[], seed: number | bigint, k: number): number {
  const S = SENTENCE_STARTS.length;
  let sum = 0;
  for (const id of inputIds) sum = (sum + (id % S) + S) % S;
  const seedPart = typeof seed === 'bigint' ? Number(((seed % BigInt(S)) + BigInt(S)) % BigInt(S)) : seed % S;
  return SENTENCE_STARTS[(((sum + seedPart + k) % S) + S) % S]!;
}

/** One step of a sequence: a token to append, or the end. */
export type SequenceStep =
  | { readonly done: false; readonly token: number; readonly logProb: number }
  | { readonly done: true; readonly reason: 'stop' | 'length' };

/**
 * Sequence `k` of a request, one token per {@link next} call, so a server can pace, stop and cancel
 * it between tokens.
 */
export class SequenceGenerator {
  readonly index: number;
  readonly tokens: number[] = [];
  private p: number;
  private finished: 'stop' | 'length' | undefined;
  private readonly options: GenerateOptions;
  private readonly script: readonly number[] | undefined;

  constructor(inputIds: readonly number[], options: GenerateOptions, k: number) {
    this.index = k;
    this.options = options;
    this.script = options.script === undefined ? undefined : encode(options.script);
    this.p = this.script ? 0 : startOffset(inputIds, options.seed ?? 0, k);
  }

  get done(): boolean {
    return this.finished !== undefined;
  }

  next(): SequenceStep {
    if (this.finished) return { done: true, reason: this.finished };
    const { maxTokens, minTokens = 0, stopWords = [], badWords = [] } = this.options;
    const endId = this.options.endId ?? END_ID;
    const L = CORPUS_IDS.length;
    if (this.tokens.length >= maxTokens) return this.finish('length');
    if (this.script) return this.nextScripted(this.script);
    // Bad words could rule out every corpus token; after a whole lap of skips nothing is left to say.
    for (let skipped = 0; skipped <= L; skipped++) {
      const tok = CORPUS_IDS[this.p % L]!;
      this.p += 1;
      this.tokens.push(tok);
      const bad = badWords.some((w) => endsWith(this.tokens, w));
      this.tokens.pop();
      if (bad) continue;
      if (this.tokens.length >= minTokens && tok === endId) return this.finish('stop');
      this.tokens.push(tok);
      if (this.tokens.length >= minTokens && stopWords.some((w) => endsWith(this.tokens, w)))
        this.finished = 'stop';
      else if (this.tokens.length >= maxTokens) this.finished = 'length';
      return { done: false, token: tok, logProb: this.options.returnLogProbs ? tokenLogProb(tok) : 0 };
    }
    return this.finish('stop');
  }

  private nextScripted(script: readonly number[]): SequenceStep {
    const tok = script[this.p];
    if (tok === undefined) return this.finish('stop');
    this.p += 1;
    this.tokens.push(tok);
    // A script that fits exactly ends with `stop`: only a cut one is `length`.
    if (this.p >= script.length) this.finished = 'stop';
    else if (this.tokens.length >= this.options.maxTokens) this.finished = 'length';
    return { done: false, token: tok, logProb: this.options.returnLogProbs ? tokenLogProb(tok) : 0 };
  }

  private finish(reason: 'stop' | 'length'): SequenceStep {
    this.finished = reason;
    return { done: true, reason };
  }

  /** The reason it ended, once {@link done}. */
  get finishReason(): 'stop' | 'length' | undefined {
    return this.finished;
  }
}

/**
 * Every sequence a request produces, run to its end (no stop or cancellation): what the fake sends
 * for `inputIds` and `options`, before any input echo or text decoding.
 */
export function generateTokens(inputIds: readonly number[], options: GenerateOptions): GeneratedSequence[] {
  const out: GeneratedSequence[] = [];
  for (let k = 0; k < sequenceCount(options); k++) {
    const seq = new SequenceGenerator(inputIds, options, k);
    const logProbs: number[] = [];
    let step = seq.next();
    while (!step.done) {
      logProbs.push(step.logProb);
      step = seq.next();
    }
    out.push({
      index: k,
      tokens: [...seq.tokens],
      logProbs,
      cumLogProb: logProbs.reduce((a, b) => a + b, 0),
      finishReason: step.reason,
    });
  }
  return out;
}
