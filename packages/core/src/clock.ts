/**
 * The clock of what happens per response: `performance.now()` read at most once per run of
 * synchronous code, the same value answered to every later call until the microtask the first
 * read queued has run (after the microtasks queued before it).
 *
 * A generation notes when each of its tokens came (time to first token, the gaps between tokens)
 * and a balanced stream when its endpoint was last heard from (see STALL_MS); the responses of one
 * socket read all arrive in one run, and their consumers continue in the microtasks that follow.
 * A clock read each would be a cost per token; this is about one per read. The value is never
 * later than the true time, and earlier by at most that stretch's length: the time the read's bytes
 * were taken up rather than the moment each consumer got to them, and far below the half second
 * that makes an endpoint suspect.
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
