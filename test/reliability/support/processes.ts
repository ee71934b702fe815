import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { FakeEvent, FakeTritonOptions } from '@trtllm/testing';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CLI = fileURLToPath(new URL('../../../packages/testing/src/cli.ts', import.meta.url));
const FAKE_PROCESS = fileURLToPath(new URL('./fake-process.ts', import.meta.url));

/** A fake Triton running in a child process: a server the test can kill, freeze and restart. */
export interface ServerProcess {
  readonly grpcUrl: string;
  readonly httpUrl: string;
  readonly child: ChildProcess;
  /** Sends `signal` to the server process; SIGKILL and SIGTERM wait for it to be gone. */
  signal(signal: NodeJS.Signals): Promise<void>;
}

/** Ports nobody listens on right now, for a server that must come back on the same ones. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = createServer();
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return server;
    }),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** A loopback port with nothing listening on it (bound once, then released): a server that refuses. */
export async function closedPort(): Promise<number> {
  return (await freePorts(1))[0]!;
}

async function firstLine(child: ChildProcess): Promise<string> {
  if (child.stdout === null) throw new Error('child has no stdout');
  const lines = createInterface({ input: child.stdout });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`server process exited with ${String(code)} before it was ready`);
  });
  const [line] = (await Promise.race([once(lines, 'line'), exited])) as [string];
  return line;
}

function control(child: ChildProcess): ServerProcess['signal'] {
  return async (signal) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = signal === 'SIGKILL' || signal === 'SIGTERM' ? once(child, 'exit') : undefined;
    child.kill(signal);
    await gone;
  };
}

/**
 * Starts the `trtllm-fake-triton` CLI (as users run it) on the given ports. Killing it and
 * starting it again on the same ports is a server restart.
 */
export async function startFakeCli(
  ports: { grpc: number; http: number },
  itlMs: number,
): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      CLI,
      '--grpc-port',
      String(ports.grpc),
      '--http-port',
      String(ports.http),
      '--itl-ms',
      String(itlMs),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await firstLine(child);
  const match = /grpc (\S+) http (\S+)$/.exec(line);
  if (match === null) throw new Error(`unexpected first line from the CLI: ${line}`);
  return { grpcUrl: match[1]!, httpUrl: match[2]!, child, signal: control(child) };
}

/** A fake Triton in a child process that also answers questions about its state. */
export interface InspectableServer extends ServerProcess {
  activeRequests(): Promise<number>;
  events(): Promise<FakeEvent[]>;
  /** CPU time the server process has used, in milliseconds. */
  cpuMs(): Promise<number>;
  close(): Promise<void>;
}

/** Starts `support/fake-process.ts`: the fake alone in its process, so the test process holds only the client. */
export async function startFakeProcess(options: FakeTritonOptions = {}): Promise<InspectableServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', FAKE_PROCESS, JSON.stringify(options)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const { grpcUrl, httpUrl } = JSON.parse(await firstLine(child)) as { grpcUrl: string; httpUrl: string };
  let seq = 0;
  const ask = <T>(question: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = ++seq;
      const onMessage = (m: { id: number; answer: T }) => {
        if (m.id !== id) return;
        child.off('message', onMessage);
        resolve(m.answer);
      };
      child.on('message', onMessage);
      child.send({ id, ask: question }, (err) => {
        if (err !== null) reject(err);
      });
    });
  return {
    grpcUrl,
    httpUrl,
    child,
    signal: control(child),
    activeRequests: () => ask<number>('activeRequests'),
    events: () => ask<FakeEvent[]>('events'),
    cpuMs: async () => {
      const { user, system } = await ask<{ user: number; system: number }>('cpuUsage');
      return (user + system) / 1000;
    },
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}

/** Polls `check` until it returns true; fails after `timeoutMs` (a bound against hangs, not a timing claim). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
