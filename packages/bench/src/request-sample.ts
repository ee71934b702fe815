import { performance } from 'node:perf_hooks';
import { type GenerateResult, type TritonLlm, TritonLlmError } from '@trtllm/sdk';

/** What the bench saw of one request, timed by its own clock (`performance.now()`), not the SDK's. */
export interface RequestSample {
  /** Index of the prompt in the input data. */
  readonly promptIndex: number;
  /** `performance.now()` when the request was handed to the SDK. */
  readonly sentAt: number;
  /** Milliseconds from sending to the end of the request (the final chunk, the result or the error). */
  readonly e2eMs: number;
  /** Streaming only: milliseconds from sending to the first chunk carrying output. */
  readonly ttftMs?: number;
  /**
   * Streaming only: this request's mean time between output tokens, i.e. the time from its first to
   * its last output chunk divided by the tokens that arrived after the first chunk. Undefined with
   * fewer than two tokens.
   */
  readonly itlMs?: number;
  /** Generated text (all chunks joined). */
  readonly text: string;
  /** Output tokens as the server counted them (`usage.completionTokens`). */
  readonly serverOutputTokens?: number;
  /** Prompt tokens as the server reported them, where the model returns them. */
  readonly serverInputTokens?: number;
  /** Set when the request failed; the sample then counts as an error, not as a latency. */
  readonly error?: TritonLlmError;
}

/** The request every sample sends. */
export interface SampleRequest {
  readonly promptIndex: number;
  readonly prompt: string;
  readonly maxTokens: number;
  readonly streaming: boolean;
  readonly signal?: AbortSignal;
}

/** Sends one request through `llm` and times it; failures come back as a sample with `error`, never thrown. */
export async function sampleRequest(llm: TritonLlm, request: SampleRequest): Promise<RequestSample> {
  const sentAt = performance.now();
  const base = { promptIndex: request.promptIndex, sentAt };
  const options = request.signal !== undefined ? { signal: request.signal } : {};
  try {
    if (!request.streaming) {
      const result = await llm.generate({ prompt: request.prompt, maxTokens: request.maxTokens }, options);
      return { ...base, e2eMs: performance.now() - sentAt, text: result.text, ...counts(result) };
    }
    let firstAt: number | undefined;
    let lastAt = 0;
    let tokensAtFirst = 0;
    let tokens = 0;
    let text = '';
    let result: GenerateResult | undefined;
    for await (const chunk of llm.stream({ prompt: request.prompt, maxTokens: request.maxTokens }, options)) {
      const now = performance.now();
      if (chunk.done) {
        result = chunk.result;
        continue;
      }
      text += chunk.text;
      // A chunk may carry no new text while the SDK holds back a split character; the token still
      // arrived, so it is timed by the SDK's running count. Without a count, each chunk with output is a token.
      const arrived =
        chunk.totalTokens > 0
          ? chunk.totalTokens - tokens
          : chunk.text.length > 0 || chunk.tokenIds.length > 0
            ? Math.max(1, chunk.tokenIds.length)
            : 0;
      if (arrived <= 0) continue;
      tokens += arrived;
      if (firstAt === undefined) {
        firstAt = now;
        tokensAtFirst = tokens;
      }
      lastAt = now;
    }
    const e2eMs = performance.now() - sentAt;
    if (result === undefined)
      throw new TritonLlmError('protocol', 'the stream ended without its final chunk');
    const later = tokens - tokensAtFirst;
    return {
      ...base,
      e2eMs,
      text,
      ...(firstAt !== undefined ? { ttftMs: firstAt - sentAt } : {}),
      ...(firstAt !== undefined && later > 0 ? { itlMs: (lastAt - firstAt) / later } : {}),
      ...counts(result),
    };
  } catch (err) {
    return { ...base, e2eMs: performance.now() - sentAt, text: '', error: TritonLlmError.from(err) };
  }
}

function counts(result: GenerateResult): Pick<RequestSample, 'serverOutputTokens' | 'serverInputTokens'> {
  return {
    ...(result.usage.completionTokens !== undefined
      ? { serverOutputTokens: result.usage.completionTokens }
      : {}),
    ...(result.usage.promptTokens !== undefined ? { serverInputTokens: result.usage.promptTokens } : {}),
  };
}
