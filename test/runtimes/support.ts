import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect } from 'vitest';
import { ABORT_AFTER_DELTAS, ABORT_MAX_TOKENS, type SmokeReport, smoke } from './app/smoke.js';

export type { SmokeReport } from './app/smoke.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const app = fileURLToPath(new URL('./app/', import.meta.url));
const exec = promisify(execFile);

/** The workspace packages the smoke imports, by name and folder. */
const PACKAGES = [
  ['sdk', 'core'],
  ['grpc', 'grpc'],
  ['http', 'http'],
] as const;

/**
 * A folder outside the repository holding the smoke app and a node_modules whose @trtllm packages
 * are the workspace's (their package.json `exports`, so the built dist/), as a user's project that
 * installed them would have. Throws when a package is not built: these tests read the build.
 */
export function smokeProject(): string {
  for (const [, dir] of PACKAGES) {
    if (!existsSync(join(root, 'packages', dir, 'dist', 'index.js'))) {
      throw new Error(`packages/${dir} is not built (no dist/index.js): run pnpm build first`);
    }
  }
  const project = mkdtempSync(join(tmpdir(), 'trtllm-runtime-'));
  mkdirSync(join(project, 'node_modules', '@trtllm'), { recursive: true });
  for (const [name, dir] of PACKAGES) {
    symlinkSync(join(root, 'packages', dir), join(project, 'node_modules', '@trtllm', name), 'dir');
  }
  // Deno reads node_modules (instead of fetching npm: specifiers) where a package.json is.
  writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  return project;
}

/** The app's sources as plain ES modules in `project`, module for module (what Bun and Deno run). */
export async function transpileApp(project: string): Promise<void> {
  await build({
    entryPoints: readdirSync(app)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(app, f)),
    outdir: project,
    bundle: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    logLevel: 'silent',
  });
}

/**
 * One Worker entry of the transpiled app (`transpileApp` first) bundled as wrangler bundles a Worker
 * (esbuild, platform neutral, the `workerd` / `worker` / `browser` export conditions) from `project`,
 * where no tsconfig maps the packages to their sources. Node built-ins stay imports, for workerd's
 * `nodejs_compat` to answer (or to fail the Worker without it).
 */
export async function bundleWorker(project: string, entry: string): Promise<string> {
  const out = await build({
    entryPoints: [join(project, entry)],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    external: ['node:*', ...builtinModules],
    target: 'es2022',
    logLevel: 'silent',
  });
  const script = out.outputFiles[0]?.text;
  if (script === undefined) throw new Error(`esbuild wrote nothing for ${entry}`);
  return script;
}

/** A runtime's executable installed by its npm package (root devDependencies), or an error saying so. */
export function runtimeBin(name: 'bun' | 'deno'): string {
  const bin = join(root, 'node_modules', '.bin', name);
  if (!existsSync(bin)) {
    throw new Error(`${name} is missing at ${bin}: run pnpm install (the npm package '${name}' installs it)`);
  }
  return bin;
}

/** Runs a runtime on the app's cli.js and parses the one JSON line it prints. */
export async function runCli(
  command: string,
  args: readonly string[],
  cwd: string,
): Promise<{ runtime: string; reports: SmokeReport[]; failure?: string }> {
  const { stdout, stderr } = await exec(command, [...args], {
    cwd,
    timeout: 60_000,
    // Neither runtime may reach for the network on its own (update checks, telemetry).
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1', DO_NOT_TRACK: '1', NO_COLOR: '1' },
  });
  const line = stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`${command} printed no report.\nstdout: ${stdout}\nstderr: ${stderr}`);
  }
}

/** The smoke run on Node in this process, from the sources, over both transports: the reference. */
export async function nodeReference(triton: FakeTriton): Promise<Record<'grpc' | 'http', SmokeReport>> {
  const grpc = grpcTransport({ baseUrl: triton.grpcUrl });
  const http = httpTransport({ baseUrl: triton.httpUrl });
  try {
    return {
      grpc: await smoke('grpc', grpc, 'node-grpc-abort'),
      http: await smoke('http', http, 'node-http-abort'),
    };
  } finally {
    await Promise.all([grpc.close(), http.close()]);
  }
}

/**
 * One fake Triton for the file (tokens 5 ms apart, so the aborted stream is still running when the
 * abort lands; CORS on, as a Worker or a page calling it from another origin needs), a project
 * folder, and Node's reference reports, made once before the file's tests.
 */
export function useRuntimeFixture(): {
  readonly triton: () => FakeTriton;
  readonly project: () => string;
  readonly reference: () => Record<'grpc' | 'http', SmokeReport>;
} {
  let triton: FakeTriton | undefined;
  let project: string | undefined;
  let reference: Record<'grpc' | 'http', SmokeReport> | undefined;
  beforeAll(async () => {
    triton = await startFakeTriton({ itlMs: 5, cors: true });
    project = smokeProject();
    reference = await nodeReference(triton);
  });
  afterAll(async () => {
    await triton?.close();
    if (project !== undefined) rmSync(project, { recursive: true, force: true });
  });
  const get = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} was not set up`);
    return value;
  };
  return {
    triton: () => get(triton, 'the fake Triton'),
    project: () => get(project, 'the project folder'),
    reference: () => get(reference, "Node's reference run"),
  };
}

/**
 * What a runtime must show for one transport: the streamed text Node streams for the same prompt,
 * in several chunks; the aborted stream ended as Node's ended (finish reason, how the server was
 * told, what the SDK's logger said) after the chunks it read, and the fake saw that request
 * cancelled long before its end.
 */
export async function expectSameAsNode(
  report: SmokeReport | undefined,
  node: SmokeReport,
  triton: FakeTriton,
): Promise<void> {
  expect(report).toBeDefined();
  if (report === undefined) return;
  expect(node.text.length).toBeGreaterThan(0);
  expect(report.text).toBe(node.text);
  expect(report.finishReason).toBe(node.finishReason);
  expect(report.deltas).toBeGreaterThan(1);

  expect(report.abort.errorCode).toBeUndefined();
  expect(report.abort.finishReason).toBe('cancelled');
  expect(report.abort.earlyStop).toEqual({ ...node.abort.earlyStop, trigger: 'abort', serverTold: true });
  expect(report.abort.tokensBeforeAbort).toBeGreaterThanOrEqual(ABORT_AFTER_DELTAS);
  expect(report.warnings).toEqual(node.warnings);
  const cancelled = await triton.waitForEvent(
    (e) => e.id === report.abort.requestId && e.event === 'cancelled',
    10_000,
  );
  expect(cancelled.tokens).toBeLessThan(ABORT_MAX_TOKENS);
}
