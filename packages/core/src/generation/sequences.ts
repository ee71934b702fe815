import type { DecodedResponse } from '../models/decode-response.js';
import type { EncodedRequest } from '../models/encode-request.js';
import type { ModelSchema } from '../models/schema.js';
import type { GenerateRequest } from '../request/request.js';
import type { DeltaChunk, FinishReason, Logits, SequenceResult, TokenLogProb } from '../result.js';
import { IncrementalDetokenizer } from '../text/detokenizer.js';
import { StopSequenceMatcher } from '../text/stop-sequences.js';
import { TextDeltaDecoder, withoutIncompleteEnd } from '../text/text-delta.js';
import type { Tokenizer } from '../text/tokenizer.js';

const NO_IDS: readonly number[] = Object.freeze([]);

/** What one sequence (a beam, or one of `n` returned sequences) has produced so far. */
class SequenceState {
  readonly ids: number[] = [];
  /** Text pieces, joined once at the end: appending to one string per token would build a rope. */
  private readonly pieces: string[] = [];
  tokenCount = 0;
  countKnown = false;
  lossy = false;
  logProbs: number[] | undefined;
  logProbTokens: TokenLogProb[] | undefined;
  topLogProbs: (readonly TokenLogProb[])[] | undefined;
  cumLogProb: number | undefined;
  serverFinish: string | undefined;
  stopReason: string | undefined;
  generationLogits: Logits | undefined;
  matchedStop = false;
  /** The length of the server's text so far, where each response repeats all of it (cumulative text). */
  textLength = 0;
  /** `num_output_tokens` as the server reported it for this sequence (non-streaming text models). */
  reportedTokens: number | undefined;

  constructor(
    readonly index: number,
    readonly detokenizer: IncrementalDetokenizer | undefined,
    /** Whether the server sends text (not token ids): its text is taken as it comes, or through `textDecoder`. */
    readonly textModel: boolean,
    /** Cumulative text only: delta text passes through as it is, as TextDeltaDecoder's delta mode does. */
    readonly textDecoder: TextDeltaDecoder | undefined,
    readonly stops: StopSequenceMatcher | undefined,
  ) {}

  append(text: string): void {
    if (text.length > 0) this.pieces.push(text);
  }

  text(): string {
    if (this.pieces.length > 1) this.pieces.splice(0, this.pieces.length, this.pieces.join(''));
    return this.pieces[0] ?? '';
  }

  /** Drops the remnant of a character cut off at the end of the whole text (see `withoutIncompleteEnd`). */
  dropIncompleteEnd(): void {
    const text = this.text();
    const kept = withoutIncompleteEnd(text);
    if (kept.length !== text.length) this.pieces.splice(0, this.pieces.length, kept);
  }
}

/**
 * The text policy of one request, sequence by sequence: token ids through the tokenizer (raw
 * model) or the server's text through the delta decoder (text models), held-back incomplete
 * characters, client-side stop sequences, counts and finish reasons. Each response costs work in
 * proportion to what it brought, not to what came before.
 */
export class SequenceTracker {
  /** One state per sequence, usually one (see {@link roomForOne}). */
  private readonly states: SequenceState[] = roomForOne();
  private matchedCount = 0;
  /** A sequence that matched a stop sequence brought more output: whoever generates it did not stop there. */
  outputAfterMatch = false;
  // What the decoder needs of the encoded request (not its input tensors, which an idle stream
  // need not keep), as fields of its own rather than one more object to reach per response.
  private readonly promptIds: readonly number[] | undefined;
  private readonly endId: number | undefined;
  private readonly promptExcluded: boolean;

  constructor(
    private readonly schema: ModelSchema,
    private readonly request: GenerateRequest,
    encoded: EncodedRequest,
    private readonly tokenizer: Tokenizer | undefined,
    private readonly streaming: boolean,
    private readonly requestId: string,
  ) {
    this.promptIds = encoded.promptIds;
    this.endId = encoded.endId;
    this.promptExcluded = encoded.promptExcluded;
  }

  /** Streamed responses repeat all text so far. */
  private get cumulative(): boolean {
    return this.streaming && this.schema.cumulativeText;
  }

  /** Whether every sequence seen so far has matched a client-side stop sequence. */
  get allMatchedStop(): boolean {
    return this.states.length > 0 && this.matchedCount === this.states.length;
  }

  /** Appends the chunks a decoded response yields to `out`. */
  absorb(decoded: DecodedResponse, out: DeltaChunk[]): void {
    const { schema, request, promptIds, endId, promptExcluded, streaming } = this;
    const sequences = decoded.sequences;
    for (let k = 0; k < sequences.length; k++) {
      const seq = sequences[k]!;
      const s = this.state(seq.sequenceIndex);
      if (seq.finishReason !== undefined) s.serverFinish = seq.finishReason;
      if (seq.stopReason !== undefined) s.stopReason = seq.stopReason;
      if (seq.cumLogProb !== undefined) s.cumLogProb = seq.cumLogProb;
      if (seq.generationLogits !== undefined) s.generationLogits = seq.generationLogits;
      // A response for one sequence reports that sequence's count (n > 1 sends one response per sequence).
      if (decoded.numOutputTokens !== undefined && sequences.length === 1 && !streaming) {
        s.reportedTokens = decoded.numOutputTokens;
      }
      if (s.matchedStop) {
        // Cumulative text (accumulating BLS, LLM-API) repeats what came before: only growth is new output.
        const textAfter = (seq.text?.length ?? 0) > (this.cumulative ? s.textLength : 0);
        if (textAfter || (seq.tokenIds?.length ?? 0) > 0) this.outputAfterMatch = true;
        continue;
      }
      let ids = NO_IDS;
      if (seq.tokenIds !== undefined) {
        let end = seq.tokenIds.length;
        let start = 0;
        const prompt = promptIds;
        if (!streaming && !promptExcluded && prompt !== undefined && startsWith(seq.tokenIds, prompt)) {
          start = prompt.length;
        }
        // Some backends leave the end id at the end of the sequence; it is not text.
        while (end > start && endId !== undefined && seq.tokenIds[end - 1] === endId) end--;
        ids = start === 0 && end === seq.tokenIds.length ? seq.tokenIds : seq.tokenIds.slice(start, end);
        s.countKnown = true;
      }
      let text = '';
      let lossy = false;
      if (s.detokenizer !== undefined) text = s.detokenizer.push(ids);
      else if (s.textModel && seq.text !== undefined) {
        let raw = seq.text;
        if (!streaming && !promptExcluded && request.prompt !== undefined && raw.startsWith(request.prompt)) {
          raw = raw.slice(request.prompt.length);
        }
        text = s.textDecoder !== undefined ? s.textDecoder.push(raw) : raw;
        s.textLength = raw.length;
        lossy = streaming && !schema.cumulativeText && raw.includes('\uFFFD');
        // An ensemble or BLS stream sends one response per token. The LLM-API model does not (a
        // response may hold no new whole character, its last may repeat the whole text): no count.
        // vLLM's responses say how many tokens each brought.
        if (seq.tokenCount !== undefined) {
          s.tokenCount += seq.tokenCount;
          s.countKnown = true;
        } else if (streaming && raw.length > 0 && schema.flavor !== 'llmapi' && schema.flavor !== 'vllm') {
          s.tokenCount += 1;
          s.countKnown = true;
        }
      }
      if (lossy) s.lossy = true;
      for (let i = 0; i < ids.length; i++) s.ids.push(ids[i]!);
      if (seq.tokenIds !== undefined) s.tokenCount += ids.length;
      if (seq.logProbs !== undefined) {
        s.logProbs ??= [];
        for (let i = 0; i < seq.logProbs.length; i++) s.logProbs.push(seq.logProbs[i]!);
      }
      let top = seq.topLogProbs;
      if (seq.logProbTokens !== undefined && top !== undefined) {
        // vLLM adds the sampled token to the alternatives when it is not among the most likely.
        const k = request.topLogProbs ?? 0;
        top = top.map((alternatives) => alternatives.filter((t) => t.rank <= k));
        s.logProbTokens ??= [];
        s.logProbTokens.push(...seq.logProbTokens);
        s.topLogProbs ??= [];
        s.topLogProbs.push(...top);
      }
      if (s.stops !== undefined && text.length > 0) {
        const step = s.stops.push(text);
        text = step.emit;
        if (step.matched !== undefined) this.markMatched(s);
      }
      s.append(text);
      if (text.length > 0 || ids.length > 0) {
        const chunk: DeltaChunk =
          seq.logProbs !== undefined
            ? {
                done: false,
                requestId: this.requestId,
                sequenceIndex: s.index,
                text,
                tokenIds: ids,
                logProbs: seq.logProbs,
                ...(seq.logProbTokens !== undefined ? { logProbTokens: seq.logProbTokens } : {}),
                ...(top !== undefined ? { topLogProbs: top } : {}),
                totalTokens: s.tokenCount,
                lossy,
              }
            : {
                done: false,
                requestId: this.requestId,
                sequenceIndex: s.index,
                text,
                tokenIds: ids,
                totalTokens: s.tokenCount,
                lossy,
              };
        out.push(chunk);
      }
    }
  }

  /**
   * Appends the text held back at the end (incomplete characters, possible stop-sequence prefixes).
   * A sequence cut by `maxTokens` loses the remnant of a character split at the cut, here, once at
   * the end: from the held-back tail of a stream (which never showed it), and from a whole text.
   * Streams of text decoded token by token (ensemble) have already shown theirs; they keep it.
   */
  flush(out: DeltaChunk[]): void {
    for (const s of this.states) {
      if (s.matchedStop) continue;
      const cut = this.finishReason(s, undefined) === 'length';
      let text = s.detokenizer?.flush() ?? s.textDecoder?.flush() ?? '';
      if (cut) text = withoutIncompleteEnd(text);
      if (s.stops !== undefined) {
        const step = text.length > 0 ? s.stops.push(text) : { emit: '' };
        text = step.emit + (step.matched === undefined ? s.stops.flush() : '');
        if (step.matched !== undefined || s.stops.matched !== undefined) this.markMatched(s);
      }
      s.append(text);
      if (cut && !this.streaming) s.dropIncompleteEnd();
      if (text.length > 0) {
        out.push({
          done: false,
          requestId: this.requestId,
          sequenceIndex: s.index,
          text,
          tokenIds: NO_IDS,
          totalTokens: s.tokenCount,
          lossy: false,
        });
      }
    }
  }

  /** Every sequence's result; `early` is the finish reason an early end gives (see Generation). */
  results(early: FinishReason | undefined): SequenceResult[] {
    return [...this.states]
      .sort((a, b) => a.index - b.index)
      .map((s) => {
        const tokenCount = s.countKnown ? s.tokenCount : s.reportedTokens;
        const result: {
          -readonly [K in keyof SequenceResult]: SequenceResult[K];
        } = {
          index: s.index,
          text: s.text(),
          tokenIds: s.ids,
          finishReason: this.finishReason(s, early),
          lossy: s.lossy,
        };
        if (tokenCount !== undefined) result.tokenCount = tokenCount;
        if (s.stopReason !== undefined) result.stopReason = s.stopReason;
        if (s.cumLogProb !== undefined) result.cumLogProb = s.cumLogProb;
        if (s.logProbs !== undefined) result.logProbs = s.logProbs;
        if (s.logProbTokens !== undefined) result.logProbTokens = s.logProbTokens;
        if (s.topLogProbs !== undefined) result.topLogProbs = s.topLogProbs;
        if (s.generationLogits !== undefined) result.generationLogits = s.generationLogits;
        return result;
      });
  }

  private markMatched(s: SequenceState): void {
    if (s.matchedStop) return;
    s.matchedStop = true;
    this.matchedCount += 1;
  }

  private finishReason(s: SequenceState, early: FinishReason | undefined): FinishReason {
    if (s.matchedStop) return 'stop';
    if (early !== undefined) return early;
    if (s.serverFinish !== undefined) {
      const f = s.serverFinish.toLowerCase();
      if (f === 'length') return 'length';
      if (f === 'stop' || f === 'end_id' || f === 'stop_words') return 'stop';
      if (f === 'cancelled' || f === 'canceled') return 'cancelled';
      if (f === 'error') return 'error';
    }
    const count = s.countKnown ? s.tokenCount : s.reportedTokens;
    if (count === undefined) return 'unknown';
    return count >= this.request.maxTokens ? 'length' : 'stop';
  }

  private state(index: number): SequenceState {
    // Sequences are few (beams, n) and usually arrive as 0, 1, ...: a short scan beats a map.
    for (let i = 0; i < this.states.length; i++) {
      const s = this.states[i]!;
      if (s.index === index) return s;
    }
    const { schema, tokenizer, request, streaming } = this;
    const stops =
      request.stopWords !== undefined && request.stopWords.length > 0
        ? new StopSequenceMatcher(request.stopWords)
        : undefined;
    const detok =
      schema.flavor === 'tensorrt_llm' && tokenizer !== undefined
        ? new IncrementalDetokenizer(tokenizer, { skipSpecialTokens: true })
        : undefined;
    const textModel = schema.flavor !== 'tensorrt_llm';
    // A delta decoder would only keep a copy of all text so far (a string grown per token) that
    // nothing reads: the state keeps its own pieces.
    const textDecoder =
      textModel && streaming && schema.cumulativeText
        ? new TextDeltaDecoder({ mode: 'cumulative' })
        : undefined;
    const s = new SequenceState(index, detok, textModel, textDecoder, stops);
    this.states.push(s);
    return s;
  }
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

/**
 * An empty array with room for one element. The first push into `[]` reserves 17 slots, and the
 * pops that empty the array again keep them once optimized: 136 bytes for every open stream
 * whose array only ever holds one element at a time.
 */
export function roomForOne<T>(): T[] {
  const array = [undefined as T];
  array.pop();
  return array;
}
