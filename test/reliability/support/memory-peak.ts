import { gc } from './heap.js';

/**
 * The most memory a process held during a piece of work, sampled every few milliseconds: a client
 * that buffers a flood and frees it when the call fails shows its cost here, not after the fact.
 */
export interface MemoryPeak {
  /** Stops sampling; growth over the baseline at the peak, in bytes. */
  stop(): { heapBytes: number; rssBytes: number };
}

/** JavaScript heap plus ArrayBuffers (where socket buffers live). */
function heapNow(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/**
 * Starts sampling against the memory in use now (take it after a GC for a clean baseline). With
 * `live`, a sample that would raise the peak by more than `liveSlack` is taken again after a full
 * GC: the peak then counts what the process holds, not garbage V8 has not collected yet (whose
 * amount is V8's choice, not the code's under test). GCs run only then, a few per flood, so the
 * work measured is not slowed by them.
 */
export function sampleMemoryPeak(
  everyMs = 5,
  { live = false, liveSlack = 4 * 1024 * 1024 }: { live?: boolean; liveSlack?: number } = {},
): MemoryPeak {
  const heapBase = heapNow();
  const rssBase = process.memoryUsage.rss();
  let heapPeak = heapBase;
  let rssPeak = rssBase;
  const sample = () => {
    let heap = heapNow();
    if (live && heap > heapPeak + liveSlack) {
      gc();
      heap = heapNow();
    }
    heapPeak = Math.max(heapPeak, heap);
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { heapBytes: heapPeak - heapBase, rssBytes: rssPeak - rssBase };
    },
  };
}
