import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeEach } from 'vitest';
import { sharedTriton } from './shared-triton.js';
import { alive } from './triton-process.js';

// Triton 2.51's Python stub sometimes dies of heap corruption under our stand-ins' load (README: "A crash of
// the real server's Python stub"), and the server never restarts a dead stub: every later case that reaches
// its model fails. So a case that failed while a stub died runs once more, on a restarted server. A case
// that failed with no stub death fails at once on its second try, with why: the retry hides nothing else.
// (The conformance project sets `retry: 1`; this file is its setup file.)

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CRASH_LINES = readFileSync(`${ROOT}/scripts/triton-crash-lines.txt`, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => new RegExp(line));

/** Lines of the server's log that say a stub died (scripts/triton-crash-lines.txt). */
export function crashLines(log: string): string[] {
  return log.split('\n').filter((line) => CRASH_LINES.some((re) => re.test(line)));
}

/**
 * What a case's try does: `first` (run it as it is), `restart` (a stub died, as `deaths` says, since the
 * last try began or before this one: restart the server, then run it), or, for a second try with no death,
 * an error that keeps the failure (it failed for another reason).
 */
export function nextTry(attempt: number, deaths: readonly string[]): 'first' | 'restart' | Error {
  if (deaths.length > 0) return 'restart';
  if (attempt === 0) return 'first';
  return new Error(
    'this case failed with no Python stub of the real Triton dying during it, so it is not run again: ' +
      'the failure above stands',
  );
}

const triton = sharedTriton();
// Read only with a real server (every hook returns first without one).
const LOG = triton?.logFile ?? '';

/** The shared server and its stubs (pid to model) when a try began, and where its log stood. */
interface Snapshot {
  readonly server: number | undefined;
  readonly stubs: ReadonlyMap<number, string>;
  readonly logAt: number;
}
let snapshot: Snapshot | undefined;

/** The command line of `pid`; empty for a zombie or a process gone meanwhile. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

function take(): Snapshot {
  const server = triton?.pid();
  const stubs = new Map<number, string>();
  if (server !== undefined && alive(server)) {
    // Triton's log says nothing when a stub dies: its process is the evidence. Every child of the
    // server is a stub; one already dead (a zombie) has no command line, so no model name.
    const children = spawnSync('pgrep', ['-P', String(server)], { encoding: 'utf8' }).stdout;
    for (const pid of children.split('\n').filter(Boolean).map(Number)) {
      stubs.set(pid, /\/models\/([^/]+)\/\d+\/model\.py/.exec(commandLine(pid))?.[1] ?? 'a model');
    }
  }
  return { server, stubs, logAt: existsSync(LOG) ? statSync(LOG).size : 0 };
}

/**
 * Stubs of `before` that are dead now (already dead then, too: a stub that died under an earlier
 * case), while their server lives on (a test that restarts the server replaces them all, and is not
 * one); or the server itself gone with a crash in its log (it aborts on a dead stub's lock).
 */
function deathsSince(before: Snapshot): string[] {
  const { server } = before;
  if (server === undefined || triton?.pid() !== server) return [];
  if (alive(server)) {
    return [...before.stubs]
      .filter(([pid]) => !alive(pid))
      .map(([pid, model]) => `the stub of '${model}' (pid ${pid}) is gone`);
  }
  return crashLines(logSince(before.logAt)).slice(0, 5);
}

function logSince(offset: number): string {
  return existsSync(LOG) ? readFileSync(LOG).subarray(offset).toString('utf8') : '';
}

/** Restarts the shared server as reliability.test.ts does: killed, then started on the same ports. */
beforeEach(({ task }) => {
  if (triton === undefined) return;
  // The first case of a file has no snapshot yet: one taken now still shows a stub dead before it.
  const deaths = deathsSince(snapshot ?? take());
  const verdict = nextTry(task.result?.retryCount ?? 0, deaths);
  if (verdict instanceof Error) throw verdict;
  if (verdict === 'restart') {
    console.warn(
      `\n!!! A Python stub of the real Triton died before "${task.name}" ran (again):\n${deaths.join('\n')}\n` +
        '!!! The server was restarted first.\n',
    );
    triton.killNow();
    triton.start();
  }
  snapshot = take();
});
