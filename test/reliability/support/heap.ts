import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// The test process is not started with --expose-gc; a fresh context made after setting the flag
// has `gc`, so samples measure live memory rather than garbage not yet collected.
setFlagsFromString('--expose-gc');
// V8 frees the memory of dead ArrayBuffers on a background thread after a GC, so right after
// gc() `arrayBuffers` can still count megabytes of garbage (up to 4 MB in a by-hand check on Node
// 22 and 26; never with this flag). Swept during the GC instead, the sample is what is live.
setFlagsFromString('--no-concurrent-array-buffer-sweeping');
/** A full, blocking GC (V8's own, exposed for these measurements). */
export const gc = runInNewContext('gc') as () => void;

/** Live JavaScript heap plus ArrayBuffer memory (where network buffers live), after a full GC. */
export function liveBytes(): number {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

export const MiB = 1024 * 1024;

/**
 * Whether the object behind `ref` is collected within a few turns of the event loop (full GCs in
 * between): false when something still holds it.
 */
export async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    if (ref.deref() === undefined) return true;
  }
  return false;
}
