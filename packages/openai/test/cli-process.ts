import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

/**
 * trtllm-openai from source as a real process (tsx resolves the workspace packages through
 * tsconfig paths), so tests see its exit codes, its output and its answer to real signals.
 */
export function runCli(args: readonly string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', cli, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** The URL of the CLI's "serving ... at <url>" line; fails with its output when it exits first. */
export async function servingUrl(child: ChildProcess): Promise<string> {
  let out = '';
  for await (const piece of child.stdout!) {
    out += String(piece);
    const match = /at (http:\/\/\S+)/.exec(out);
    if (match) return match[1]!;
  }
  throw new Error(`the CLI exited without serving: ${out}`);
}
