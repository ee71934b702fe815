import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeEach, inject } from 'vitest';

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

const real = inject('realTriton');
const port = 'unavailable' in real ? undefined : new URL(real.httpUrl).port;
const LOG = `${ROOT}/build/triton-${port}.log`;
const PIDFILE = `${ROOT}/build/triton-${port}.pid`;

/** The shared server and its stubs (pid to model) when a try began, and where its log stood. */
interface Snapshot {
  readonly server: number | undefined;
  readonly stubs: ReadonlyMap<number, string>;
  readonly logAt: number;
}
let snapshot: Snapshot | undefined;

/** Whether `pid` runs: a stub its server has not reaped yet is a zombie, and dead. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name in parentheses, which may itself hold spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

function serverPid(): number | undefined {
  try {
    return Number(readFileSync(PIDFILE, 'utf8').trim());
  } catch {
    return undefined;
  }
}

function take(): Snapshot {
  const server = serverPid();
  const stubs = new Map<number, string>();
  if (server !== undefined && alive(server)) {
    // Triton's log says nothing when a stub dies: its process is the evidence.
    const listed = spawnSync('pgrep', ['-a', '-P', String(server), '-f', 'triton_python_backend_stub'], {
      encoding: 'utf8',
    }).stdout;
    for (const line of listed.split('\n')) {
      const match = /^(\d+) .*\/models\/([^/]+)\/\d+\/model\.py/.exec(line);
      if (match !== null) stubs.set(Number(match[1]), match[2]!);
    }
  }
  return { server, stubs, logAt: existsSync(LOG) ? statSync(LOG).size : 0 };
}

/**
 * Stubs that died: since `before`, while their server lived on (a test that restarts the server replaces
 * them all, and is not one), and any child of the server that is a zombie now (a stub that died before the
 * snapshot, in an earlier file); or the server itself gone with a crash in its log (it aborts on a dead
 * stub's lock).
 */
function deathsSince(before: Snapshot | undefined): string[] {
  const server = before?.server ?? serverPid();
  if (server === undefined) return [];
  if (serverPid() === server && alive(server)) {
    const gone = new Set<number>();
    for (const [pid] of before?.stubs ?? []) if (!alive(pid)) gone.add(pid);
    const children = spawnSync('pgrep', ['-P', String(server)], { encoding: 'utf8' }).stdout;
    for (const pid of children.split('\n').filter(Boolean).map(Number)) if (!alive(pid)) gone.add(pid);
    return [...gone].map(
      (pid) => `the stub of '${before?.stubs.get(pid) ?? 'a model'}' (pid ${pid}) is gone`,
    );
  }
  if (before !== undefined && serverPid() === server) return crashLines(logSince(before.logAt)).slice(0, 5);
  return [];
}

function logSince(offset: number): string {
  if (!existsSync(LOG)) return '';
  const fd = openSync(LOG, 'r');
  try {
    const size = statSync(LOG).size;
    if (offset >= size) return '';
    const buf = Buffer.alloc(size - offset);
    readSync(fd, buf, 0, buf.length, offset);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Restarts the shared server as reliability.test.ts does: killed, then started on the same ports. */
function restartTriton(): void {
  if ('unavailable' in real) return;
  const env = {
    ...process.env,
    TRITON_HTTP_PORT: new URL(real.httpUrl).port,
    TRITON_GRPC_PORT: new URL(real.grpcUrl).port,
    TRTLLM_FAKE_EVENT_LOG: real.eventLog,
  };
  execFileSync('bash', ['scripts/triton-down.sh'], {
    cwd: ROOT,
    env: { ...env, TRITON_DOWN_SIGNAL: 'KILL' },
  });
  execFileSync('bash', ['scripts/triton-up.sh'], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
}

beforeEach(({ task }) => {
  if (port === undefined) return;
  const deaths = deathsSince(snapshot);
  const verdict = nextTry(task.result?.retryCount ?? 0, deaths);
  if (verdict instanceof Error) throw verdict;
  if (verdict === 'restart') {
    console.warn(
      `\n!!! A Python stub of the real Triton died before "${task.name}" ran (again):\n${deaths.join('\n')}\n` +
        '!!! The server was restarted first.\n',
    );
    restartTriton();
  }
  snapshot = take();
});
