/**
 * The soak's request mix: each request picks a prompt, a length, a model and how it ends (to its end,
 * an AbortSignal, `break`, or the graceful `stop()`), and checks the text it got against the fake's
 * deterministic generator. A closed loop per stream keeps the concurrency constant.
 */
import { type StreamChunk, type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { decode, fakeTokenizer, generateTokens } from '@trtllm/testing';

export type Ending = 'completed' | 'aborted' | 'broken' | 'stopped';

/** What the requests did so far. */
export interface LoadCounts {
  completed: number;
  aborted: number;
  broken: number;
  stopped: number;
  tokens: number;
  /** Seconds from each request's start to its end, and to its first chunk, summed over the requests. */
  requestSeconds: number;
  firstChunkSeconds: number;
  /** Requests whose text or end was not what the fake sends; the first few are kept in `failureExamples`. */
  failures: number;
  failureExamples: string[];
  /** How requests ended by `stop()` finished, by model and finish reason. */
  stopFinishes: Record<string, number>;
}

const PROMPTS = [
  'What is ML?',
  'Hello world',
  'What is machine learning?',
  'Models learn patterns from data',
  'Tell me about artificial intelligence',
] as const;
const MIN_TOKENS = 8;
const MAX_TOKENS = 96;

/** mulberry32: a small seeded generator, so a run's mix can be repeated. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type ModelName = 'tensorrt_llm' | 'ensemble';

/**
 * The text a request gets when it runs to its end: the raw model through the tokenizer decodes the
 * whole sequence; the ensemble's server decodes token by token, so broken characters arrive as U+FFFD.
 */
function expectedOutput(
  model: ModelName,
  prompt: string,
  maxTokens: number,
): { text: string; finish: string } {
  const seq = generateTokens(fakeTokenizer.encode(prompt), { maxTokens })[0]!;
  const text = model === 'tensorrt_llm' ? decode(seq.tokens) : seq.tokens.map((t) => decode([t])).join('');
  return { text, finish: seq.finishReason };
}

export class SoakLoad {
  readonly counts: LoadCounts = {
    completed: 0,
    aborted: 0,
    broken: 0,
    stopped: 0,
    tokens: 0,
    requestSeconds: 0,
    firstChunkSeconds: 0,
    failures: 0,
    failureExamples: [],
    stopFinishes: {},
  };
  private readonly models: Record<ModelName, TritonLlm>;
  // Bounded: models x prompts x lengths.
  private readonly expected = new Map<string, { text: string; finish: string }>();
  private readonly random: () => number;

  constructor(transport: Transport, seed: number) {
    this.models = {
      tensorrt_llm: new TritonLlm({ transport, model: 'tensorrt_llm', tokenizer: fakeTokenizer }),
      ensemble: new TritonLlm({ transport, model: 'ensemble' }),
    };
    this.random = seededRandom(seed);
  }

  /** Runs `streams` closed loops until `until()` says stop, then waits for the requests in flight. */
  async run(streams: number, until: () => boolean): Promise<void> {
    const loop = async () => {
      while (!until()) await this.one();
    };
    await Promise.all(Array.from({ length: streams }, loop));
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private time(start: number, firstChunk: number): void {
    const end = performance.now();
    this.counts.requestSeconds += (end - start) / 1000;
    this.counts.firstChunkSeconds += ((firstChunk === 0 ? end : firstChunk) - start) / 1000;
  }

  private fail(message: string): void {
    this.counts.failures++;
    if (this.counts.failureExamples.length < 20) this.counts.failureExamples.push(message);
  }

  private async one(): Promise<void> {
    const model: ModelName = this.random() < 0.5 ? 'tensorrt_llm' : 'ensemble';
    const prompt = this.pick(PROMPTS);
    const maxTokens = MIN_TOKENS + Math.floor(this.random() * (MAX_TOKENS - MIN_TOKENS + 1));
    const r = this.random();
    const ending: Ending = r < 0.7 ? 'completed' : r < 0.8 ? 'aborted' : r < 0.9 ? 'broken' : 'stopped';
    // Ends early after this many text chunks (when the stream has that many).
    const cut = 1 + Math.floor(this.random() * (maxTokens - 1));
    const key = `${model}|${prompt}|${maxTokens}`;
    let expected = this.expected.get(key);
    if (expected === undefined) {
      expected = expectedOutput(model, prompt, maxTokens);
      this.expected.set(key, expected);
    }
    const what = `${key} ${ending}@${cut}`;

    const start = performance.now();
    let firstChunk = 0;
    const controller = ending === 'aborted' ? new AbortController() : undefined;
    const stream = this.models[model].stream(
      { prompt, maxTokens },
      controller !== undefined ? { signal: controller.signal } : {},
    );
    let text = '';
    let chunks = 0;
    let final: Extract<StreamChunk, { done: true }> | undefined;
    let ended: Ending = 'completed';
    let caught: unknown;
    try {
      for await (const chunk of stream) {
        if (firstChunk === 0) firstChunk = performance.now();
        if (chunk.done) {
          final = chunk;
          continue;
        }
        text += chunk.text;
        if (chunk.text.length > 0) chunks++;
        if (chunks === cut && ended === 'completed' && ending !== 'completed') {
          ended = ending;
          if (ending === 'broken') break;
          if (ending === 'aborted') controller!.abort();
          else await stream.stop();
        }
      }
    } catch (err) {
      caught = err;
    }
    this.time(start, firstChunk);
    if (caught !== undefined) {
      const err = caught;
      if (!(ended === 'aborted' && err instanceof TritonLlmError && err.code === 'cancelled')) {
        const code = (err as { code?: string }).code;
        return this.fail(
          `${what}: ${err instanceof Error ? `${err.name} ${code}: ${err.message}` : String(err)}`,
        );
      }
    }
    this.counts.tokens += final?.usage.completionTokens ?? 0;
    if (ended === 'completed') {
      if (text !== expected.text)
        return this.fail(`${what}: text ${JSON.stringify(text)} != ${JSON.stringify(expected.text)}`);
      if (final?.finishReason !== expected.finish)
        return this.fail(`${what}: finish ${final?.finishReason} != ${expected.finish}`);
    } else {
      // A request cut inside a character ends its text with the bytes it has, decoded as U+FFFD.
      if (!expected.text.startsWith(text.replace(/\uFFFD+$/, '')))
        return this.fail(`${what}: text ${JSON.stringify(text)} is no prefix of the full text`);
      if (ended === 'stopped') {
        if (final === undefined) return this.fail(`${what}: stop() ended with no final chunk`);
        const how = `${model}:${final.finishReason}`;
        this.counts.stopFinishes[how] = (this.counts.stopFinishes[how] ?? 0) + 1;
      }
    }
    this.counts[ended]++;
  }
}
