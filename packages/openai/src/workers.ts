import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { UsageError } from './cli-models.js';
import { cgroupCpuLimit } from './cpu-quota.js';
import type { ServerHooks } from './server.js';

/** Most workers `--workers` takes: past the cores of any machine this runs on, only memory grows. */
const MAX_WORKERS = 256;

/**
 * `--workers`: an integer 1..256, or `auto` (one per CPU the process may run on, within a
 * container's CPU limit: see cpu-quota.ts); default 1. `cgroupRoot` is for tests.
 */
export function workersFlag(value: string | undefined, cgroupRoot?: string): number {
  if (value === undefined) return 1;
  if (value === 'auto') {
    const limit = cgroupCpuLimit(cgroupRoot) ?? MAX_WORKERS;
    return Math.min(MAX_WORKERS, availableParallelism(), limit);
  }
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < 1 || n > MAX_WORKERS)
    throw new UsageError(
      `--workers must be an integer from 1 to ${MAX_WORKERS} or auto (got ${JSON.stringify(value)})`,
    );
  return n;
}

/** Messages between the primary and its workers (prom-client's own pass beside them). */
type ToPrimary =
  | { readonly type: 'trtllm:listening' }
  | { readonly type: 'trtllm:metrics'; readonly id: number };
type ToWorker = {
  readonly type: 'trtllm:metrics';
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
};

function isMessage(message: unknown, type: string): boolean {
  return message !== null && typeof message === 'object' && (message as { type?: unknown }).type === type;
}

/**
 * The primary of `--workers N`: forks N workers that each run the whole CLI and share the
 * listening port (node:cluster hands out connections round-robin). It serves no request itself:
 * it answers a worker's `/metrics` with every worker's sum (prom-client's `clusterMetrics`),
 * restarts a worker that dies after it started serving, and on SIGTERM or SIGINT has every
 * worker drain, then exits 0 (1 if a worker did not end cleanly). A worker that fails before
 * serving (Triton not answering, a bad flag) stops them all with its exit code: restarting it
 * would fail the same way.
 */
export function runPrimary(count: number, log: (message: string) => void): void {
  const aggregator = new AggregatorRegistry();
  const serving = new WeakSet<Worker>();
  // Our own count: cluster.workers may still hold a worker when its 'exit' is emitted.
  const live = new Set<Worker>();
  let stopping = false;
  let failed = 0;
  const fork = (): void => {
    const worker = cluster.fork();
    live.add(worker);
    worker.on('message', (message: ToPrimary) => {
      if (isMessage(message, 'trtllm:listening')) serving.add(worker);
      else if (isMessage(message, 'trtllm:metrics')) {
        const { id } = message as { id: number };
        const answer = (reply: ToWorker) => {
          if (worker.isConnected()) worker.send(reply);
        };
        aggregator.clusterMetrics().then(
          (text) => answer({ type: 'trtllm:metrics', id, text }),
          (err: unknown) => answer({ type: 'trtllm:metrics', id, error: (err as Error).message }),
        );
      }
    });
    worker.on('exit', (code, signal) => {
      live.delete(worker);
      const how = signal !== null ? `signal ${signal}` : `code ${code}`;
      if (stopping) {
        if (code !== 0) {
          if (failed === 0) failed = 1;
          log(`worker ${worker.process.pid} ended with ${how} while stopping`);
        }
      } else if (!serving.has(worker)) {
        log(`worker ${worker.process.pid} failed to start (${how}); stopping`);
        stop(code !== null && code !== 0 ? code : 1);
      } else {
        log(`worker ${worker.process.pid} died (${how}); starting another`);
        fork();
      }
      if (stopping && live.size === 0) process.exit(failed);
    });
  };
  const stop = (code: number): void => {
    if (stopping) return;
    stopping = true;
    failed = code;
    if (live.size === 0) process.exit(failed);
    for (const w of live) w.process.kill('SIGTERM');
  };
  const signalled = (signal: string): void => {
    if (stopping) return;
    log(`${signal}: every worker drains`);
    stop(0);
  };
  process.on('SIGTERM', () => signalled('SIGTERM'));
  process.on('SIGINT', () => signalled('SIGINT'));
  log(`starting ${count} workers`);
  for (let i = 0; i < count; i++) fork();
}

/**
 * The hooks of a server run by a cluster worker: `/metrics` asks the primary for every worker's
 * sum (each worker answers with its own registry), and `x-trtllm-worker` names the answering
 * worker's pid. `listening()` tells the primary this worker started serving.
 */
export function workerHooks(): { hooks: ServerHooks; listening: () => void } {
  const pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();
  let next = 0;
  let contentType = '';
  process.on('message', (message: ToWorker) => {
    if (!isMessage(message, 'trtllm:metrics')) return;
    const waiting = pending.get(message.id);
    if (waiting === undefined) return;
    pending.delete(message.id);
    if (message.error !== undefined) waiting.reject(new Error(`metrics of the workers: ${message.error}`));
    else waiting.resolve(message.text ?? '');
  });
  const metrics = (local: Registry) => {
    // Constructing one installs prom-client's answer to the primary's requests; it reports `local`.
    contentType = new AggregatorRegistry().contentType;
    AggregatorRegistry.setRegistries([local]);
    return () =>
      new Promise<{ text: string; contentType: string }>((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve: (text) => resolve({ text, contentType }), reject });
        process.send!({ type: 'trtllm:metrics', id } satisfies ToPrimary);
      });
  };
  return {
    hooks: { metrics, headers: { 'x-trtllm-worker': String(process.pid) } },
    listening: () => process.send!({ type: 'trtllm:listening' } satisfies ToPrimary),
  };
}

/** Whether this process is a worker of `--workers` (it runs the CLI as one server). */
export function isClusterWorker(): boolean {
  return cluster.isWorker;
}
