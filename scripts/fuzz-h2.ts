/**
 * `pnpm fuzz:h2 [--iterations N] [--seed S]`: the HTTP/2 fuzz of test/reliability/h2-fuzz.test.ts,
 * as long as asked. Runs seeds S, S+1, ... one at a time and prints every failing seed (a hang past
 * the deadline, a wrong answer, an untyped error, or an uncaught exception while it ran) with the
 * steps that made it. Exits 1 when any seed failed.
 */
import { parseArgs } from 'node:util';
import {
  type FuzzCase,
  type FuzzOutcome,
  fuzzCase,
  runFuzzCase,
} from '../test/reliability/support/h2-fuzz.js';

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '1' },
  },
});
const iterations = Number(values.iterations);
const first = Number(values.seed);
if (!Number.isSafeInteger(iterations) || iterations < 1 || !Number.isSafeInteger(first) || first < 0) {
  console.error('usage: pnpm fuzz:h2 [--iterations N] [--seed S] (whole numbers)');
  process.exit(2);
}

let current: FuzzCase | undefined;
const failed = new Map<number, string[]>();
function fail(seed: number, why: string): void {
  const list = failed.get(seed) ?? [];
  list.push(why);
  failed.set(seed, list);
  console.log(
    `seed ${seed} FAILED: ${why}\n  steps: ${(current?.seed === seed ? current.steps : []).join('; ')}`,
  );
}
// A crash of the client is what the fuzz is for: note it against the running seed and go on.
process.on('uncaughtException', (err) => fail(current?.seed ?? -1, `uncaught exception: ${String(err)}`));
process.on('unhandledRejection', (err) => fail(current?.seed ?? -1, `unhandled rejection: ${String(err)}`));

const results = new Map<string, number>();
const started = performance.now();
let slowest: FuzzOutcome | undefined;
const stalled: FuzzOutcome[] = [];
for (let seed = first; seed < first + iterations; seed++) {
  current = fuzzCase(seed);
  const outcome = await runFuzzCase(current);
  if (outcome.failure !== undefined) fail(seed, outcome.failure);
  const key = `${outcome.path} ${outcome.result}`;
  results.set(key, (results.get(key) ?? 0) + 1);
  if (outcome.stalled === true) stalled.push(outcome);
  if (slowest === undefined || outcome.ms > slowest.ms) slowest = outcome;
  if ((seed - first + 1) % 500 === 0) console.log(`${seed - first + 1} / ${iterations}`);
}
const seconds = (performance.now() - started) / 1000;
console.log(`\n${iterations} cases (seeds ${first}..${first + iterations - 1}) in ${seconds.toFixed(1)} s`);
for (const [key, n] of [...results].sort()) console.log(`  ${key}: ${n}`);
if (slowest !== undefined)
  console.log(`slowest: seed ${slowest.seed}, ${slowest.ms.toFixed(0)} ms (${slowest.result})`);
if (stalled.length > 0) {
  console.log(
    `waited for the deadline although the server closed the connection (not failures): ${stalled.map((o) => `${o.seed} (${o.path})`).join(' ')}`,
  );
}
console.log(failed.size === 0 ? 'no failing seed' : `failing seeds: ${[...failed.keys()].join(' ')}`);
process.exit(failed.size === 0 ? 0 : 1);
