import { type RequestSample, summarizeLevel } from '@trtllm/bench';
import { type Tokenizer, TritonLlmError } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';

// A tokenizer that counts words, so expected token counts can be read off the texts.
const wordTokenizer: Tokenizer = {
  encode: (text) =>
    text
      .split(/\s+/)
      .filter((w) => w.length > 0)
      .map((_, i) => i),
  decode: () => '',
};

const prompts = [
  { input: 'one two three', output: 'a b', line: 1 },
  { input: 'four five', line: 2 },
];

function ok(
  promptIndex: number,
  e2eMs: number,
  text: string,
  extra: Partial<RequestSample> = {},
): RequestSample {
  return { promptIndex, sentAt: 0, e2eMs, text, ...extra };
}

function failed(code: 'unavailable' | 'internal', message: string): RequestSample {
  return { promptIndex: 0, sentAt: 0, e2eMs: 1, text: '', error: new TritonLlmError(code, message) };
}

describe('a level report', () => {
  it('takes latencies and throughput from successful requests and counts the failures by kind', () => {
    const report = summarizeLevel(
      [
        ok(0, 100, 'a b', { ttftMs: 10, itlMs: 2, serverOutputTokens: 4, serverInputTokens: 3 }),
        ok(1, 300, 'x', { ttftMs: 30, itlMs: 4, serverOutputTokens: 6, serverInputTokens: 2 }),
        failed('unavailable', 'down'),
        failed('unavailable', 'down'),
        failed('internal', 'boom'),
      ],
      { concurrency: 2, durationMs: 2000, prompts },
    );
    expect(report).toMatchObject({ concurrency: 2, requests: 5, completed: 2, errors: 3, durationS: 2 });
    expect(report.errorKinds).toEqual([
      { code: 'unavailable', message: 'down', count: 2 },
      { code: 'internal', message: 'boom', count: 1 },
    ]);
    expect(report.e2eMs).toMatchObject({ count: 2, p50: 200, min: 100, max: 300 });
    expect(report.ttftMs?.p50).toBe(20);
    expect(report.itlMs?.mean).toBe(3);
    expect(report.requestThroughput).toBe(1);
    expect(report.outputTokens).toBe(10);
    expect(report.outputTokenThroughput).toBe(5);
    expect(report.inputTokens).toBe(5);
    expect(report.inputTokenThroughput).toBe(2.5);
    expect(report.accuracy).toEqual({ scored: 1, exactMatch: 1, rougeL: 1 });
  });

  it('counts tokens with the tokenizer when one is given, not with the server counts', () => {
    const report = summarizeLevel(
      [ok(0, 1, 'a b c', { serverOutputTokens: 99 }), ok(1, 1, 'd', { serverOutputTokens: 99 })],
      { concurrency: 1, durationMs: 1000, prompts, tokenizer: wordTokenizer },
    );
    expect(report.inputTokens).toBe(5);
    expect(report.outputTokens).toBe(4);
  });

  it('reports no input tokens when the server counted only some prompts', () => {
    const report = summarizeLevel(
      [
        ok(0, 1, 'a', { serverInputTokens: 3, serverOutputTokens: 1 }),
        ok(1, 1, 'b', { serverOutputTokens: 1 }),
      ],
      { concurrency: 1, durationMs: 1000, prompts },
    );
    expect(report.inputTokens).toBeUndefined();
    expect(report.inputTokenThroughput).toBeUndefined();
    expect(report.outputTokens).toBe(2);
  });

  it('has no latency and no accuracy when every request failed', () => {
    const report = summarizeLevel([failed('internal', 'boom')], { concurrency: 1, durationMs: 10, prompts });
    expect(report.e2eMs).toBeUndefined();
    expect(report.ttftMs).toBeUndefined();
    expect(report.accuracy).toBeUndefined();
    expect(report.requestThroughput).toBe(0);
  });
});
