/**
 * The replica layer's clock: `performance.now()` read at most once per run of synchronous code
 * (until the next microtask checkpoint), the same value answered to every later call in that run.
 *
 * Every response a balanced stream receives notes when its endpoint was last heard from (see
 * STALL_MS), and the responses of one socket read all arrive in one run: a clock read each would
 * be a cost per token, this is one per read. The value is never later than the true time and
 * earlier by at most the run's length, so a silence measured against it can only look longer by
 * as much, far below the half second that makes an endpoint suspect.
 */
let reading = 0;
let current = false;

function expire(): void {
  current = false;
}

export function now(): number {
  if (!current) {
    reading = performance.now();
    current = true;
    queueMicrotask(expire);
  }
  return reading;
}
