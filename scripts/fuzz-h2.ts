/**
 * `pnpm fuzz:h2 [--iterations N] [--seed S]`: the HTTP/2 fuzz of test/reliability/h2-fuzz.test.ts,
 * as long as asked. Seeds S, S+1, ... run one at a time in a worker process; this one prints every
 * failing seed (a hang past the deadline, a wrong answer, an untyped error, an uncaught exception,
 * or the worker dying under it, as a native abort in nghttp2 does) with the steps that made it, and
 * starts a new worker after the seed that killed the last. Exits 1 when any seed failed.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type FuzzOutcome, fuzzCase, runFuzzCase } from '../test/reliability/support/h2-fuzz.js';

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '1' },
    worker: { type: 'boolean', default: false },
  },
});
const iterations = Number(values.iterations);
const first = Number(values.seed);
if (!Number.isSafeInteger(iterations) || iterations < 1 || !Number.isSafeInteger(first) || first < 0) {
  console.error('usage: pnpm fuzz:h2 [--iterations N] [--seed S] (whole numbers)');
  process.exit(2);
}

/** What a worker prints, one JSON object a line. */
type WorkerLine =
  | { readonly start: number }
  | { readonly outcome: FuzzOutcome }
  | { readonly crash: number; readonly error: string };

if (values.worker) await work();
else await lead();

/** Runs the seeds, saying which one starts before it runs: a native abort leaves no other trace. */
async function work(): Promise<void> {
  let seed = first;
  const say = (line: WorkerLine) => process.stdout.write(`${JSON.stringify(line)}\n`);
  process.on('uncaughtException', (err) => say({ crash: seed, error: `uncaught exception: ${String(err)}` }));
  process.on('unhandledRejection', (err) =>
    say({ crash: seed, error: `unhandled rejection: ${String(err)}` }),
  );
  for (; seed < first + iterations; seed++) {
    say({ start: seed });
    say({ outcome: await runFuzzCase(fuzzCase(seed)) });
  }
  // A connection torn down by the last case can still bring the process down (see lead()).
  await new Promise((resolve) => setTimeout(resolve, 500));
  process.exit(0);
}

async function lead(): Promise<void> {
  const failed = new Map<number, string[]>();
  const fail = (seed: number, why: string) => {
    failed.set(seed, [...(failed.get(seed) ?? []), why]);
    console.log(`seed ${seed} FAILED: ${why}\n  steps: ${fuzzCase(seed).steps.join('; ')}`);
  };
  const results = new Map<string, number>();
  const stalled: FuzzOutcome[] = [];
  let slowest: FuzzOutcome | undefined;
  const started = performance.now();
  let next = first;
  const end = first + iterations;
  while (next < end) {
    const { lastStarted, finished, exit } = await runWorker(next, end - next, (line) => {
      if ('crash' in line) fail(line.crash, line.error);
      if (!('outcome' in line)) return;
      const o = line.outcome;
      if (o.failure !== undefined) fail(o.seed, o.failure);
      if (o.stalled === true) stalled.push(o);
      const key = `${o.path} ${o.result}`;
      results.set(key, (results.get(key) ?? 0) + 1);
      if (slowest === undefined || o.ms > slowest.ms) slowest = o;
      if ((o.seed - first + 1) % 500 === 0) console.log(`${o.seed - first + 1} / ${iterations}`);
    });
    if (lastStarted === undefined) {
      console.log(`the worker did not start (${exit}); stopping`);
      break;
    }
    if (!finished) {
      // The teardown of the case before (its connection closed under node:http2) can be what
      // kills the process while this one runs: both are named.
      const before = lastStarted > first ? ` or just after seed ${lastStarted - 1}` : '';
      fail(lastStarted, `the process died while it ran${before} (${exit})`);
      results.set('process died', (results.get('process died') ?? 0) + 1);
    }
    next = lastStarted + 1;
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`\n${iterations} cases (seeds ${first}..${end - 1}) in ${seconds.toFixed(1)} s`);
  for (const [key, n] of [...results].sort()) console.log(`  ${key}: ${n}`);
  const s = slowest as FuzzOutcome | undefined;
  if (s !== undefined) console.log(`slowest: seed ${s.seed}, ${s.ms.toFixed(0)} ms (${s.result})`);
  if (stalled.length > 0) {
    const list = stalled.map((o) => `${o.seed} (${o.path})`).join(' ');
    console.log(`waited for the deadline although the server closed the connection (not failures): ${list}`);
  }
  console.log(failed.size === 0 ? 'no failing seed' : `failing seeds: ${[...failed.keys()].join(' ')}`);
  process.exit(failed.size === 0 ? 0 : 1);
}

/** Runs a worker over `count` seeds from `seed` until it ends or dies. */
async function runWorker(
  seed: number,
  count: number,
  onLine: (line: WorkerLine) => void,
): Promise<{ lastStarted: number | undefined; finished: boolean; exit: string }> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', script, '--worker', '--seed', String(seed), '--iterations', String(count)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  let lastStarted: number | undefined;
  let lastDone: number | undefined;
  for await (const text of createInterface({ input: child.stdout })) {
    if (!text.startsWith('{')) continue;
    const line = JSON.parse(text) as WorkerLine;
    if ('start' in line) lastStarted = line.start;
    if ('outcome' in line) lastDone = line.outcome.seed;
    onLine(line);
  }
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve([child.exitCode, child.signalCode]);
    else child.once('exit', (c, s) => resolve([c, s]));
  });
  const exit = `${signal ?? `exit ${code}`}${stderr.trim() === '' ? '' : `: ${stderr.trim().split('\n').slice(-3).join(' ')}`}`;
  return { lastStarted, finished: lastStarted !== undefined && lastDone === lastStarted && code === 0, exit };
}
