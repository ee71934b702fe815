import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** An OpenAI front end under test, in a process of its own (with its workers, if it forks any). */
export interface FrontEnd {
  readonly name: string;
  readonly pid: number;
  readonly baseUrl: string;
  /** User + system CPU of the process and its live child processes (every thread), in milliseconds. */
  cpuMs(): number;
  /** System CPU alone (the kernel's share: socket reads and writes), in milliseconds. */
  systemMs(): number;
  /** Write system calls the processes have made (`syscw` of /proc/<pid>/io); undefined where unreadable. */
  writeCalls(): number | undefined;
  stop(): Promise<void>;
}

// BENCH_OPENAI_NODE_ARGS passes flags to our server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
const nodeArgs = (process.env.BENCH_OPENAI_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
const OURS_CLI = fileURLToPath(new URL('../../packages/openai/dist/cli.js', import.meta.url));
/** The floors: the least a Node front end spends per chunk on node:http, and on node:net with HTTP/1.1 of its own. */
const FLOORS = {
  'node floor': fileURLToPath(new URL('./node-floor.ts', import.meta.url)),
  'net floor': fileURLToPath(new URL('./net-floor.ts', import.meta.url)),
} as const;
export type FloorName = keyof typeof FLOORS;
// /proc/<pid>/stat counts in clock ticks; Linux reports them at USER_HZ, 100 on every mainstream build.
const TICK_MS = 10;

/** Where a front end runs: one CPU, a taskset CPU list such as `0-1`, or unpinned. */
export type Cpus = number | string | undefined;

function pinned(argv: readonly string[], cpu: Cpus): [string, string[]] {
  return cpu === undefined ? [argv[0]!, argv.slice(1)] : ['taskset', ['-c', String(cpu), ...argv]];
}

/** utime and stime of a process (taskset execs its command, so the pid is the server's). */
function processCpu(pid: number): { userMs: number; systemMs: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces and parentheses; fields after it are plain numbers.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { userMs: Number(fields[11]) * TICK_MS, systemMs: Number(fields[12]) * TICK_MS };
}

/**
 * The process and its descendants: `--workers N` forks N node:cluster workers that serve the
 * requests, and their CPU is the front end's. A process with no children is itself alone.
 */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      // It ended between the listing and the read.
      continue;
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const siblings = children.get(ppid) ?? [];
    siblings.push(Number(entry));
    children.set(ppid, siblings);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

function treeCpu(root: number): { userMs: number; systemMs: number } {
  let userMs = 0;
  let systemMs = 0;
  for (const pid of processTree(root)) {
    try {
      const cpu = processCpu(pid);
      userMs += cpu.userMs;
      systemMs += cpu.systemMs;
    } catch (err) {
      // A child that ended after the listing counts no more; the root must be readable.
      if (pid === root) throw err;
    }
  }
  return { userMs, systemMs };
}

/** Write system calls (write, writev, sendmsg ...) of a process so far. */
function processWriteCalls(pid: number): number | undefined {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const n = Number(/^syscw: (\d+)$/m.exec(io)?.[1]);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    // Hardened kernels and some containers hide /proc/<pid>/io.
    return undefined;
  }
}

function frontEnd(name: string, child: ChildProcess, baseUrl: string): FrontEnd {
  const pid = child.pid!;
  return {
    name,
    pid,
    baseUrl,
    cpuMs: () => {
      const { userMs, systemMs } = treeCpu(pid);
      return userMs + systemMs;
    },
    systemMs: () => treeCpu(pid).systemMs,
    writeCalls: () => {
      let calls = 0;
      for (const p of processTree(pid)) {
        const n = processWriteCalls(p);
        if (n === undefined) return undefined;
        calls += n;
      }
      return calls;
    },
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(kill);
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}

/**
 * A front end that prints `... at http://...` once it serves; with workers, each prints its line
 * (they share one port) and the front end is ready when all have.
 */
function announced(child: ChildProcess, name: string, lines = 1): Promise<FrontEnd> {
  return new Promise((resolve, reject) => {
    failOnEarlyExit(child, name, reject);
    const urls: string[] = [];
    const reader = createInterface({ input: child.stdout! });
    const onLine = (line: string): void => {
      const url = /at (http:\/\/\S+)/.exec(line)?.[1];
      if (url === undefined) {
        reader.off('line', onLine);
        child.removeAllListeners('exit');
        child.kill('SIGKILL');
        reject(new Error(`${name} printed no URL: ${line}`));
        return;
      }
      urls.push(url);
      if (urls.length < lines) return;
      reader.off('line', onLine);
      child.removeAllListeners('exit');
      if (new Set(urls).size !== 1) {
        child.kill('SIGKILL');
        reject(new Error(`${name}: its workers serve different addresses: ${urls.join(', ')}`));
        return;
      }
      resolve(frontEnd(name, child, urls[0]!));
    };
    reader.on('line', onLine);
  });
}

function failOnEarlyExit(child: ChildProcess, name: string, reject: (e: Error) => void): void {
  child.once('exit', (code, signal) =>
    reject(new Error(`${name} exited (${code ?? signal}) before serving`)),
  );
}

/**
 * `trtllm-openai` from packages/openai/dist (as users install it), or another build of its CLI
 * (`cli`, to compare before and after a change in one run), on an ephemeral port; with `workers`
 * > 1, as `--workers N` (node:cluster workers sharing the port, pinned where the primary is).
 */
export function startOurs(
  tritonGrpcUrl: string,
  cpu: Cpus,
  name = 'trtllm-openai',
  cli = OURS_CLI,
  workers = 1,
): Promise<FrontEnd> {
  // The fake names its gRPC address http://; the CLI picks gRPC by the grpc:// scheme.
  const triton = tritonGrpcUrl.replace(/^http:/, 'grpc:');
  const [cmd, args] = pinned(
    [
      process.execPath,
      ...nodeArgs,
      cli,
      '--triton',
      triton,
      '--model',
      'ensemble',
      '--port',
      '0',
      ...(workers > 1 ? ['--workers', String(workers)] : []),
    ],
    cpu,
  );
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  return announced(child, name, workers);
}

/** One of the floors (node-floor.ts, net-floor.ts), on an ephemeral port. */
export function startFloor(name: FloorName, tritonGrpcUrl: string, cpu: Cpus): Promise<FrontEnd> {
  const [cmd, args] = pinned(
    [process.execPath, '--import', 'tsx', FLOORS[name], '--triton', tritonGrpcUrl],
    cpu,
  );
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  return announced(child, name);
}

/**
 * openai_trtllm's binary with its own defaults (its `info` log of every request included), on a
 * port we pick: it prints no address we could read back. Tokio starts one worker thread per CPU
 * the process may run on, so `cpu` sets its parallelism too.
 */
export async function startPeer(
  binary: string,
  tritonGrpcUrl: string,
  cpu: Cpus,
  name = 'openai_trtllm',
): Promise<FrontEnd> {
  const port = await freePort();
  const [cmd, args] = pinned(
    [binary, '--host', '127.0.0.1', '--port', String(port), '--triton-endpoint', tritonGrpcUrl],
    cpu,
  );
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<never>((_, reject) => failOnEarlyExit(child, name, reject));
  await Promise.race([waitForPort(port), exited]);
  child.removeAllListeners('exit');
  return frontEnd(name, child, `http://127.0.0.1:${port}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listened on port ${port} within 30 s`);
}
