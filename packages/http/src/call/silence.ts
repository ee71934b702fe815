import { TritonLlmError } from '@trtllm/sdk';
import type { ErrorContext } from '../errors.js';

const MAX_TIMER_MS = 2 ** 31 - 1;
// The bound is checked in this many ticks: silence is found between the bound and a quarter more.
const TICKS = 4;

/**
 * The liveness rule of an answer that has begun: once its head arrived, a stream that then
 * receives no byte for `limitMs` is given up. HTTP/1.1 has no PING, so silence is the only sign of
 * a server that froze (SIGSTOP, a hung host) or of a connection that died without a word; Triton
 * sends a stream's head with its first response and writes every later one as it comes, so a live
 * one is never silent that long. A byte costs one boolean, not a clock read (`Date.now()` took
 * 0.4 µs here) nor a timer reset: one timer per stream ticks every quarter of the bound and fails
 * the stream after four ticks in a row heard nothing. While the reader is paused (the consumer is
 * behind) the silence is the client's own and does not count.
 */
export class SilenceWatch {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private heard = false;
  private silentTicks = 0;

  constructor(
    private readonly limitMs: number,
    private readonly onSilent: (limitMs: number) => void,
  ) {}

  /** The answer began, or reading resumed: the silence counts from now. */
  start(): void {
    if (this.limitMs <= 0 || this.timer !== undefined) return;
    this.heard = false;
    this.silentTicks = 0;
    this.arm();
  }

  /** Bytes arrived. */
  received(): void {
    this.heard = true;
  }

  /** The answer ended, failed or is paused. */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    // setTimeout fires at once past 2^31 - 1 ms: a longer bound just takes more ticks of that.
    const tickMs = Math.min(this.limitMs / TICKS, MAX_TIMER_MS);
    this.timer = setTimeout(() => this.tick(), tickMs);
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

  private tick(): void {
    this.timer = undefined;
    if (this.heard) {
      this.heard = false;
      this.silentTicks = 0;
    } else {
      this.silentTicks += 1;
    }
    if (this.silentTicks * Math.min(this.limitMs / TICKS, MAX_TIMER_MS) >= this.limitMs) {
      this.onSilent(this.limitMs);
      return;
    }
    this.arm();
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
