import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** An OpenAI front end under test, in a process of its own. */
export interface FrontEnd {
  readonly name: string;
  readonly pid: number;
  readonly baseUrl: string;
  /** User + system CPU of the whole process (every thread), in milliseconds. */
  cpuMs(): number;
  /** System CPU alone (the kernel's share: socket reads and writes), in milliseconds. */
  systemMs(): number;
  /** Write system calls the process has made (`syscw` of /proc/<pid>/io); undefined where unreadable. */
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

function pinned(argv: readonly string[], cpu: number | undefined): [string, string[]] {
  return cpu === undefined ? [argv[0]!, argv.slice(1)] : ['taskset', ['-c', String(cpu), ...argv]];
}

/** utime and stime of a process (taskset execs its command, so the pid is the server's). */
function processCpu(pid: number): { userMs: number; systemMs: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces and parentheses; fields after it are plain numbers.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { userMs: Number(fields[11]) * TICK_MS, systemMs: Number(fields[12]) * TICK_MS };
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
      const { userMs, systemMs } = processCpu(pid);
      return userMs + systemMs;
    },
    systemMs: () => processCpu(pid).systemMs,
    writeCalls: () => processWriteCalls(pid),
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

/** A front end that prints `... at http://...` once it serves. */
function announced(child: ChildProcess, name: string): Promise<FrontEnd> {
  return new Promise((resolve, reject) => {
    failOnEarlyExit(child, name, reject);
    createInterface({ input: child.stdout! }).once('line', (line) => {
      const url = /at (http:\/\/\S+)/.exec(line)?.[1];
      child.removeAllListeners('exit');
      if (url === undefined) {
        child.kill('SIGKILL');
        reject(new Error(`${name} printed no URL: ${line}`));
        return;
      }
      resolve(frontEnd(name, child, url));
    });
  });
}

function failOnEarlyExit(child: ChildProcess, name: string, reject: (e: Error) => void): void {
  child.once('exit', (code, signal) =>
    reject(new Error(`${name} exited (${code ?? signal}) before serving`)),
  );
}

/**
 * `trtllm-openai` from packages/openai/dist (as users install it), or another build of its CLI
 * (`cli`, to compare before and after a change in one run), on an ephemeral port.
 */
export function startOurs(
  tritonGrpcUrl: string,
  cpu: number | undefined,
  name = 'trtllm-openai',
  cli = OURS_CLI,
): Promise<FrontEnd> {
  // The fake names its gRPC address http://; the CLI picks gRPC by the grpc:// scheme.
  const triton = tritonGrpcUrl.replace(/^http:/, 'grpc:');
  const [cmd, args] = pinned(
    [process.execPath, ...nodeArgs, cli, '--triton', triton, '--model', 'ensemble', '--port', '0'],
    cpu,
  );
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  return announced(child, name);
}

/** One of the floors (node-floor.ts, net-floor.ts), on an ephemeral port. */
export function startFloor(
  name: FloorName,
  tritonGrpcUrl: string,
  cpu: number | undefined,
): Promise<FrontEnd> {
  const [cmd, args] = pinned(
    [process.execPath, '--import', 'tsx', FLOORS[name], '--triton', tritonGrpcUrl],
    cpu,
  );
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  return announced(child, name);
}

/**
 * openai_trtllm's binary with its own defaults (its `info` log of every request included), on a
 * port we pick: it prints no address we could read back.
 */
export async function startPeer(
  binary: string,
  tritonGrpcUrl: string,
  cpu: number | undefined,
): Promise<FrontEnd> {
  const port = await freePort();
  const [cmd, args] = pinned(
    [binary, '--host', '127.0.0.1', '--port', String(port), '--triton-endpoint', tritonGrpcUrl],
    cpu,
  );
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<never>((_, reject) => failOnEarlyExit(child, 'openai_trtllm', reject));
  await Promise.race([waitForPort(port), exited]);
  child.removeAllListeners('exit');
  return frontEnd('openai_trtllm', child, `http://127.0.0.1:${port}`);
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
