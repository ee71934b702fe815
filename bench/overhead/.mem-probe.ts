import { setTimeout as sleep } from 'node:timers/promises';
import { writeHeapSnapshot } from 'node:v8';
import { http2BareVariant } from './variants/http2-bare.js';
import { sdkVariant } from './variants/sdk.js';

const [grpcUrl, httpUrl, which, n] = process.argv.slice(2);
const v =
  which === 'bare'
    ? http2BareVariant({ grpcUrl: grpcUrl!, httpUrl: httpUrl! })
    : sdkVariant(which === 'http' ? 'http' : 'grpc', { grpcUrl: grpcUrl!, httpUrl: httpUrl! });
for (let i = 0; i < 20; i++) await v.stream('What is ML?', 1, i);
const gc = (globalThis as any).gc;
gc();
gc();
writeHeapSnapshot('/tmp/prof/before.heapsnapshot');
const m0 = process.memoryUsage();
await Promise.all(
  Array.from(
    { length: Number(n) },
    (_, i) =>
      new Promise<void>((ok) => {
        v.stream('What is ML?', 2, 1000 + i, ok);
      }),
  ),
);
await sleep(500);
gc();
gc();
const m1 = process.memoryUsage();
console.log(
  JSON.stringify({
    rss: (m1.rss - m0.rss) / Number(n) / 1024,
    heap: (m1.heapUsed - m0.heapUsed) / Number(n) / 1024,
    ext: (m1.external - m0.external) / Number(n) / 1024,
  }),
);
writeHeapSnapshot('/tmp/prof/after.heapsnapshot');
process.exit(0);
