import { fakeTokenizer } from '@trtllm/testing';
import { NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generated } from './expected.js';
import { sampleValue, scrape } from './prometheus-text.js';
import { type Stack, startStack } from './stack.js';

const model = 'ensemble';

describe('GET /metrics', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model, fake: { itlMs: 2 }, server: { tokenizer: fakeTokenizer } });
  });
  afterAll(() => stack.close());

  test('is Prometheus text whose counters and histograms move with traffic', async () => {
    const before = await scrape(stack.baseURL);
    expect(before.contentType).toContain('text/plain');
    const had = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(before.samples, name, { model_name: model, ...labels });

    const plain = await stack.client.completions.create({ model, prompt: 'Hello', max_tokens: 4 });
    const stream = await stack.client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Tell me more' }],
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
    });
    let streamUsage: { prompt_tokens: number; completion_tokens: number } | undefined;
    let pieces = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) pieces += 1;
      if (chunk.usage) streamUsage = chunk.usage;
    }
    await expect(
      stack.client.completions.create({ model: 'not-served', prompt: 'x', max_tokens: 1 }),
    ).rejects.toBeInstanceOf(NotFoundError);

    const { samples } = await scrape(stack.baseURL);
    const now = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(samples, name, { model_name: model, ...labels }) - had(name, labels);
    expect(now('trtllm:http_requests_total', { endpoint: '/v1/completions', status: '200' })).toBe(1);
    expect(now('trtllm:http_requests_total', { endpoint: '/v1/chat/completions', status: '200' })).toBe(1);
    // The unknown model is counted, with no model of the server's to name.
    expect(
      sampleValue(samples, 'trtllm:http_requests_total', { model_name: '', status: '404' }) -
        sampleValue(before.samples, 'trtllm:http_requests_total', { model_name: '', status: '404' }),
    ).toBe(1);
    expect(
      sampleValue(samples, 'trtllm:request_errors_total', { model_name: '', code: 'not_found' }),
    ).toBeGreaterThanOrEqual(1);
    expect(now('trtllm:generation_tokens_total')).toBe(
      generated('Hello', { maxTokens: 4 })[0]!.tokens.length + streamUsage!.completion_tokens,
    );
    expect(now('trtllm:prompt_tokens_total')).toBe(plain.usage!.prompt_tokens + streamUsage!.prompt_tokens);
    expect(now('trtllm:e2e_request_latency_seconds_count')).toBe(2);
    // Only the stream has a first token to time; each later piece of it is one inter-token gap.
    expect(now('trtllm:time_to_first_token_seconds_count')).toBe(1);
    expect(now('trtllm:inter_token_latency_seconds_count')).toBe(pieces - 1);
    expect(now('trtllm:inter_token_latency_seconds_sum')).toBeGreaterThan(0);
    expect(now('trtllm:time_to_first_token_seconds_bucket', { le: '+Inf' })).toBe(1);
    expect(sampleValue(samples, 'trtllm:num_requests_running', { model_name: model })).toBe(0);
    expect(sampleValue(samples, 'trtllm:num_requests_waiting')).toBe(0);
  });

  test('needs no API key, as Prometheus scrapes without one', async () => {
    const keyed = await startStack({ model, server: { apiKey: 'sk-secret' } });
    try {
      const res = await fetch(new URL('/metrics', keyed.baseURL));
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('# TYPE trtllm:time_to_first_token_seconds histogram');
    } finally {
      await keyed.close();
    }
  });
});
