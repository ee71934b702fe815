import { spawn } from 'node:child_process';

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a tool to its end and resolves with what it printed; rejects with the tail of its output
 * when it exits non-zero or runs past `timeoutMs` (it is then killed, by its own pid).
 */
export function runCommand(
  argv: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string; readonly timeoutMs: number },
): Promise<CommandResult> {
  const [cmd, ...args] = argv;
  if (cmd === undefined) return Promise.reject(new Error('runCommand: empty command'));
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: options.env ?? process.env,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd}: no end after ${options.timeoutMs} ms\n${tail(stdout, stderr)}`));
    }, options.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`${cmd} exited with ${code}:\n${tail(stdout, stderr)}`));
    });
  });
}

function tail(stdout: string, stderr: string): string {
  return `${stdout.trim().slice(-1200)}\n${stderr.trim().slice(-1200)}`.trim();
}
