import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));

// Asynchronous, so a test worker stays responsive while pnpm and npm run.
const exec = promisify(execFile);

/** Every published workspace package, by folder and name. */
export const PUBLISHED_PACKAGES: readonly (readonly [string, string])[] = [
  ['core', '@trtllm/sdk'],
  ['grpc', '@trtllm/grpc'],
  ['http', '@trtllm/http'],
  ['connect', '@trtllm/connect'],
  ['tokenizers', '@trtllm/tokenizers'],
  ['testing', '@trtllm/testing'],
  ['ai-sdk', '@trtllm/ai-sdk'],
  ['langchain', '@trtllm/langchain'],
  ['openai', '@trtllm/openai'],
  ['bench', '@trtllm/bench'],
];

/** The version of a third-party package that the workspace installed (and so tests against). */
export function installedVersion(name: string): string {
  const manifest = join(root, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/**
 * Makes `project` (a folder outside the repository, so nothing resolves through the workspace) an app
 * whose dependencies are the packed tarballs of `packages` and the `thirdParty` packages at the
 * workspace's versions, and installs it with plain npm, as a user would. Resolves with npm's output.
 */
export async function installPacked(
  project: string,
  packages: readonly (readonly [string, string])[],
  thirdParty: readonly string[],
): Promise<string> {
  const tarballs = join(project, 'tarballs');
  mkdirSync(tarballs, { recursive: true });
  const packed: Record<string, string> = {};
  for (const [dir, name] of packages) {
    const pkgDir = join(root, 'packages', dir);
    // `pnpm test` builds first; packing without a build would test stale or missing files.
    if (!existsSync(join(pkgDir, 'dist', 'index.cjs'))) {
      throw new Error(`${name} is not built (packages/${dir}/dist): run pnpm build first`);
    }
    // pnpm pack rewrites workspace:^ ranges to the packed versions.
    const { stdout } = await exec('pnpm', ['pack', '--pack-destination', tarballs], { cwd: pkgDir });
    packed[name] = `file:${stdout.trim().split('\n').at(-1)!}`;
  }
  const app = {
    name: 'trtllm-packed-app',
    version: '0.0.0',
    private: true,
    dependencies: { ...packed, ...Object.fromEntries(thirdParty.map((n) => [n, installedVersion(n)])) },
    // The packed packages depend on each other by version; the tarballs must answer those too.
    overrides: packed,
  };
  writeFileSync(join(project, 'package.json'), JSON.stringify(app, null, 2));
  // npm checks `engines` on the Node that runs it; its cache makes runs after the first one offline.
  try {
    const { stdout, stderr } = await exec(
      'npm',
      ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline', '--loglevel=warn'],
      { cwd: project, env: { ...process.env, CI: 'true' }, maxBuffer: 64 * 1024 * 1024 },
    );
    return `${stdout}\n${stderr}`;
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`npm install failed in ${project}:\n${stdout ?? ''}\n${stderr ?? ''}`);
  }
}
