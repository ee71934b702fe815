import { TritonLlmError } from '@trtllm/sdk';

/**
 * The requests in flight and the server's shutdown: once draining, new requests are refused
 * (503, `/health` too, so a load balancer stops sending), those in flight run on until they end
 * or the drain timeout passes, and then end with `unavailable` (a stream with a last SSE error
 * event), which {@link shutdownSignal} carries as its reason.
 */
export class Drain {
  private readonly inFlight = new Map<Promise<void>, AbortController>();
  private readonly shutdown = new AbortController();
  private drainingNow = false;

  /** Aborted, with the error streams end with, when the drain timeout passes. */
  get shutdownSignal(): AbortSignal {
    return this.shutdown.signal;
  }

  get draining(): boolean {
    return this.drainingNow;
  }

  /** The refusal of a request that arrives while draining. */
  refusal(): TritonLlmError {
    return new TritonLlmError(
      'unavailable',
      'The server is shutting down; send the request to another replica',
      {
        retryable: true,
      },
    );
  }

  /** Tracks one request until `done` settles; the shutdown aborts `controller` (its upstream calls' signal). */
  track(done: Promise<void>, controller: AbortController): void {
    this.inFlight.set(done, controller);
    void done.finally(() => this.inFlight.delete(done));
  }

  /**
   * Refuses new requests from now on, waits up to `timeoutMs` for those in flight, then ends the
   * rest and waits for them to answer.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.drainingNow = true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      while (this.inFlight.size > 0) {
        const next = await Promise.race([Promise.allSettled([...this.inFlight.keys()]), timedOut]);
        if (next === 'timeout') break;
      }
    } finally {
      clearTimeout(timer);
    }
    if (this.inFlight.size === 0) return;
    const reason = new TritonLlmError(
      'unavailable',
      `The server shut down before this request finished (drain timeout ${timeoutMs} ms); retry it on another replica`,
      { retryable: true },
    );
    // The shutdown's own signal first: the requests read it to tell their end from a client's leaving.
    this.shutdown.abort(reason);
    for (const controller of this.inFlight.values()) controller.abort(reason);
    await Promise.allSettled([...this.inFlight.keys()]);
  }
}
