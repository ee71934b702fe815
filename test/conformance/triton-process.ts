import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Free of vitest's test API, so the global setup (outside the test workers) can use it too.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where scripts/triton-up.sh keeps the pid and the log of the real Triton on `httpPort`. */
export function tritonFiles(httpPort: string): { pidFile: string; logFile: string } {
  return {
    pidFile: `${ROOT}/build/triton-${httpPort}.pid`,
    logFile: `${ROOT}/build/triton-${httpPort}.log`,
  };
}

/** The pid a pid file holds; undefined when there is no such file. */
export function readPid(pidFile: string): number | undefined {
  try {
    return Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    return undefined;
  }
}

/** The pid a pid file holds, for a server that must have one: throws, naming the file, when there is none. */
export function requirePid(pidFile: string): number {
  const pid = readPid(pidFile);
  if (pid === undefined) throw new Error(`no pid file at ${pidFile}: the real Triton did not start`);
  return pid;
}

/** Whether the process a pid file names runs (none when there is no pid file). */
export function pidFileRuns(pidFile: string): boolean {
  const pid = readPid(pidFile);
  return pid !== undefined && alive(pid);
}

/** Whether `pid` runs: a child its parent has not reaped yet is a zombie, and dead. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name in parentheses, which may itself hold spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
