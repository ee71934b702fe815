import { TritonLlmError } from '@trtllm/sdk';
import type { ErrorContext } from '../errors.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The liveness rule of an answer that has begun: once its head arrived, a stream that then
 * receives no byte for `limitMs` is given up. HTTP/1.1 has no PING, so silence is the only sign of
 * a server that froze (SIGSTOP, a hung host) or of a connection that died without a word; Triton
 * writes every response of a stream as it comes, so a live one is never silent that long. One
 * timer per stream, re-armed only when it fires: a byte costs one clock read, not a timer reset.
 * While the reader is paused (the consumer is behind) the silence is the client's own and does not
 * count.
 */
export class SilenceWatch {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastReceivedAt = 0;

  constructor(
    private readonly limitMs: number,
    private readonly onSilent: (limitMs: number) => void,
  ) {}

  /** The answer began, or reading resumed: the silence counts from now. */
  start(): void {
    if (this.limitMs <= 0 || this.timer !== undefined) return;
    this.lastReceivedAt = Date.now();
    this.arm(this.limitMs);
  }

  /** Bytes arrived. */
  received(): void {
    this.lastReceivedAt = Date.now();
  }

  /** The answer ended, failed or is paused. */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(delay: number): void {
    // setTimeout fires at once past 2^31 - 1 ms; a longer bound is checked again when it fires.
    this.timer = setTimeout(() => this.fire(), Math.min(delay, MAX_TIMER_MS));
    // The socket keeps the process alive while the answer is read; this timer never should.
    const timer: unknown = this.timer;
    if (
      typeof timer === 'object' &&
      timer !== null &&
      'unref' in timer &&
      typeof timer.unref === 'function'
    ) {
      timer.unref();
    }
  }

  private fire(): void {
    this.timer = undefined;
    const silentFor = Date.now() - this.lastReceivedAt;
    if (silentFor < this.limitMs) this.arm(this.limitMs - silentFor);
    else this.onSilent(this.limitMs);
  }
}

/**
 * The error of an answer that went silent: `unavailable` and retryable, as the gRPC transport's
 * unanswered keepalive PING is (the server is presumed gone, another attempt or replica may serve
 * it). It names the setting that moves the bound.
 */
export function silentError(context: ErrorContext, limitMs: number): TritonLlmError {
  return new TritonLlmError(
    'unavailable',
    `${context.what}: the server sent nothing for ${limitMs} ms after its answer began; the connection ` +
      'is presumed dead (a frozen server or a lost peer) and was closed. httpTransport({ silenceTimeoutMs }) ' +
      'sets this bound (0 turns it off)',
    {
      ...(context.requestId !== undefined && context.requestId !== ''
        ? { requestId: context.requestId }
        : {}),
      ...(context.model !== undefined ? { model: context.model } : {}),
    },
  );
}
