import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';

/**
 * The proxy's binary, from PATH or the sbin directories Debian installs it to. A missing binary
 * fails the suite (CI installs both proxies in `.ci/run`); these tests are never skipped.
 */
export function proxyBinary(name: 'nginx' | 'haproxy'): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  throw new Error(
    `${name} is not installed: the proxy tests need nginx and haproxy from the distribution's packages ` +
      '(`apt-get install nginx haproxy`; .ci/run installs them in CI)',
  );
}

/** Runs a proxy command to its end (a config check, a signal sent through the proxy's own CLI). */
export function runProxyCommand(binary: string, args: readonly string[]): void {
  execFileSync(binary, args, { stdio: 'pipe' });
}

// A test process that dies must not leave a proxy behind; a master stopped by SIGTERM takes its
// workers along (SIGKILL would orphan nginx's).
const liveMasters = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of liveMasters) child.kill('SIGTERM');
});

/**
 * One proxy master process, run in the foreground as the test's child, with everything it prints
 * kept so that a failure can show it. `ready` is the line the proxy logs once it listens (a port
 * that accepts could belong to another process); `logFile` is where the proxy writes its own log,
 * when that is not stderr.
 */
export class ProxyProcess {
  private child: ChildProcess | undefined;
  private output = '';

  constructor(
    private readonly binary: string,
    private readonly args: readonly string[],
    private readonly ready: RegExp,
    private readonly logFile?: string,
  ) {}

  /** Starts the master and resolves once it says it is ready and `port` accepts connections. */
  async start(port: number): Promise<void> {
    if (this.running) throw new Error('the proxy is already running');
    // What this start prints is new; a log file keeps the lines of earlier starts.
    this.output = '';
    const readyBefore = this.count(this.ready);
    const child = spawn(this.binary, this.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout?.on('data', (d: Buffer) => {
      this.output += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      this.output += d.toString();
    });
    liveMasters.add(child);
    child.once('exit', () => liveMasters.delete(child));
    await this.waitUntil(
      async () => this.count(this.ready) > readyBefore && (await accepts(port)),
      `the proxy to listen on port ${port}`,
    );
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Everything the proxy printed or logged so far. */
  log(): string {
    let file = '';
    if (this.logFile !== undefined) {
      try {
        file = readFileSync(this.logFile, 'utf8');
      } catch {
        // not written yet
      }
    }
    return this.output + file;
  }

  /** How many times `pattern` occurs in the proxy's output and log. */
  count(pattern: RegExp): number {
    return this.log().match(new RegExp(pattern.source, 'g'))?.length ?? 0;
  }

  /** Sends `signal` to the master. */
  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  /** Fast shutdown (SIGTERM: connections closed at once); resolves when the master has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === undefined || !this.running) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }

  /**
   * Polls `check` until it holds; fails when the master exits or after 15 s, quoting the proxy's
   * output. A bound against hangs, not a timing claim.
   */
  async waitUntil(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!(await check())) {
      if (!this.running) throw new Error(`the proxy exited while waiting for ${what}:\n${this.log()}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${this.log()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
