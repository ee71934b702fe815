/**
 * Keepalive of one connection: a PING once the peer has been silent for `everyMs` while streams
 * are open, and the connection given up when it goes unanswered for `timeoutMs`. A busy connection
 * sends none, and a silent one no more often than the interval: grpc servers (Triton among them)
 * count PINGs that come faster than their policy allows as strikes, and close the connection.
 */
export class Keepalive {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private deadline: ReturnType<typeof setTimeout> | undefined;
  private lastReceivedAt = 0;

  constructor(
    private readonly everyMs: number,
    private readonly timeoutMs: number,
    private readonly sendPing: () => void,
    private readonly unanswered: (timeoutMs: number) => void,
  ) {}

  /** The peer sent something: the connection is alive. */
  received(now: number): void {
    this.lastReceivedAt = now;
  }

  /** A PING acknowledgement came. */
  answered(): void {
    if (this.deadline !== undefined) clearTimeout(this.deadline);
    this.deadline = undefined;
  }

  /** Streams are open: watch the connection. */
  start(): void {
    if (this.everyMs <= 0 || this.timer !== undefined) return;
    this.lastReceivedAt = Date.now();
    this.arm(this.everyMs);
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.deadline !== undefined) clearTimeout(this.deadline);
    this.timer = undefined;
    this.deadline = undefined;
  }

  private arm(delay: number): void {
    this.timer = setTimeout(() => this.fire(), delay);
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    const silentFor = Date.now() - this.lastReceivedAt;
    if (silentFor < this.everyMs) {
      this.arm(this.everyMs - silentFor);
      return;
    }
    if (this.deadline === undefined) {
      this.sendPing();
      this.deadline = setTimeout(() => this.unanswered(this.timeoutMs), this.timeoutMs);
      this.deadline.unref();
    }
    // Its answer counts as received, so the next PING comes a whole interval after it at the soonest.
    this.arm(this.everyMs);
  }
}

/** The warning of a server that closed a connection for too many PINGs, once the interval doubled. */
export function tooManyPingsWarning(url: URL, keepaliveMs: number): string {
  return (
    `@trtllm/grpc: the server at ${url.origin} closed the connection for too many keepalive PINGs ` +
    `(GOAWAY ENHANCE_YOUR_CALM "too_many_pings"); new connections ping every ${keepaliveMs} ms. Set ` +
    "grpcTransport({ keepaliveMs }) at or above the server's --grpc-http2-min-recv-ping-interval-without-data " +
    '(Triton: 300000 by default; strikes allowed: --grpc-http2-max-ping-strikes, 2 by default).'
  );
}
