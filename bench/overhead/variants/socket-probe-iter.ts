import type { SocketProbe } from './socket-probe.js';
import type { Variant } from './variant.js';

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * One request's tokens as an `AsyncIterator`, the least one can be: tokens that came before the
 * consumer asked wait in an array; a consumer that asks first gets a pending promise that the next
 * token settles.
 */
class TokenIterator implements AsyncIterator<string>, AsyncIterable<string> {
  private readonly queued: string[] = [];
  private head = 0;
  private ended = false;
  private failure: unknown;
  private resolveNext: ((r: IteratorResult<string>) => void) | undefined;
  private rejectNext: ((err: unknown) => void) | undefined;

  [Symbol.asyncIterator](): AsyncIterator<string> {
    return this;
  }

  next(): Promise<IteratorResult<string>> {
    if (this.head < this.queued.length) {
      const value = this.queued[this.head]!;
      this.head += 1;
      if (this.head === this.queued.length) {
        this.queued.length = 0;
        this.head = 0;
      }
      return Promise.resolve({ done: false, value });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      this.resolveNext = resolve;
      this.rejectNext = reject;
    });
  }

  push(value: string): void {
    const resolve = this.resolveNext;
    if (resolve === undefined) {
      this.queued.push(value);
      return;
    }
    this.resolveNext = undefined;
    this.rejectNext = undefined;
    resolve({ done: false, value });
  }

  end(): void {
    this.ended = true;
    const resolve = this.resolveNext;
    this.resolveNext = undefined;
    this.rejectNext = undefined;
    resolve?.(DONE);
  }

  fail(err: unknown): void {
    this.failure = err;
    const reject = this.rejectNext;
    this.resolveNext = undefined;
    this.rejectNext = undefined;
    reject?.(err);
  }
}

/**
 * The socket probe with each request's tokens consumed by `for await` over an `AsyncIterator`, as
 * an SDK that streams through `AsyncIterable` hands them out: a promise, a resumption and the
 * iterator's result per token, and, while the consumer waits, a pending promise that outlives the
 * young generation once thousands of streams are open. The floor of any `AsyncIterable` client
 * on this exchange, where the plain probe is the floor of reading the frames.
 */
export function iteratedProbeVariant(probe: SocketProbe): Variant {
  return {
    async stream(prompt, maxTokens, id, onFirstToken) {
      const tokens = new TokenIterator();
      let count = 0;
      probe
        .streamText(prompt, maxTokens, id, (text) => tokens.push(text))
        .then(
          (n) => {
            count = n;
            tokens.end();
          },
          (err: unknown) => tokens.fail(err),
        );
      let text = '';
      let first = true;
      for await (const piece of tokens) {
        if (first) {
          first = false;
          onFirstToken?.();
        }
        text += piece;
      }
      if (text.length === 0 && count > 0) throw new Error('tokens counted but no text received');
      return count;
    },
    close: () => probe.close(),
  };
}
