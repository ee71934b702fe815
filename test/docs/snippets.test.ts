import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedVersion } from '../support/packed-project.js';
import { markdownFiles, root, type TsBlock, tsBlocks } from './markdown.js';

// Every TypeScript block of the docs, as a user pastes it into a project that installed the packages
// with the README's own commands (pack:all in the clone, npm i of the tarballs): type-checked strict,
// and the blocks marked `<!-- runs -->` run against the fake Triton. A failure names the Markdown
// file and line.

const exec = promisify(execFile);

/**
 * What an app brings itself beside our packages, at the workspace's versions: the peers the install
 * lines name, the frameworks the agent and telemetry blocks use, and Node's types.
 */
const THIRD_PARTY = [
  'ai',
  'zod',
  '@langchain/core',
  'langchain',
  'openai',
  '@opentelemetry/api',
  '@types/node',
];

/** The addresses the docs use for a local Triton, and what a runnable block gets instead. */
const LOCAL_GRPC = 'http://localhost:8001';
const LOCAL_GRPC_SCHEME = 'grpc://localhost:8001';
const LOCAL_HTTP = 'http://localhost:8000';
const LOCAL = [LOCAL_GRPC, LOCAL_GRPC_SCHEME, LOCAL_HTTP];

/** Blocks checked as one file: a block and the ones marked `continues` after it. */
interface Group {
  readonly name: string;
  readonly blocks: TsBlock[];
}

function groups(): Group[] {
  const all: Group[] = [];
  for (const file of markdownFiles()) {
    let current: Group | undefined;
    for (const block of tsBlocks(file)) {
      if (block.continues) {
        if (!current)
          throw new Error(`${file}:${block.line}: marked continues, but no block comes before it`);
        current.blocks.push(block);
      } else {
        current = { name: `${file.replace(/[^\w]+/g, '_')}_L${block.line}`, blocks: [block] };
        all.push(current);
      }
    }
  }
  return all;
}

const GROUPS = groups();
const RUNNABLE = GROUPS.filter((g) => g.blocks.some((b) => b.runs));

/** The group as one file, and for each of its lines the Markdown file and line it came from. */
function source(group: Group, fake?: FakeTriton): { text: string; origin: string[] } {
  const text: string[] = [];
  const origin: string[] = [];
  for (const block of group.blocks) {
    block.code.split('\n').forEach((line, i) => {
      text.push(
        fake
          ? line
              .replaceAll(LOCAL_GRPC, fake.grpcUrl)
              .replaceAll(LOCAL_GRPC_SCHEME, fake.grpcUrl.replace(/^http:/, 'grpc:'))
              .replaceAll(LOCAL_HTTP, fake.httpUrl)
          : line,
      );
      origin.push(`${block.file}:${block.line + i}`);
    });
  }
  return { text: `${text.join('\n')}\n`, origin };
}

async function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number },
): Promise<{ status: number | string; output: string; stdout: string }> {
  try {
    const { stdout, stderr } = await exec(command, args, {
      ...options,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      killSignal: 'SIGKILL',
    });
    return { status: 0, output: `${stdout}\n${stderr}`, stdout };
  } catch (err) {
    const { code, killed, stdout, stderr } = err as {
      code?: number | string;
      killed?: boolean;
      stdout?: string;
      stderr?: string;
    };
    return {
      status: killed ? 'killed (timeout)' : (code ?? 1),
      output: `${stdout ?? ''}\n${stderr ?? ''}`,
      stdout: stdout ?? '',
    };
  }
}

const readme = readFileSync(join(root, 'README.md'), 'utf8');
/** The first line of the ```sh block under `<!-- quickstart:NAME -->` in the README. */
const quickstart = (name: string): string | undefined =>
  new RegExp(`<!-- quickstart:${name} -->\\s*\`\`\`sh\\n([^\\n]+)\\n`).exec(readme)?.[1];

describe('the docs, pasted into a project that installed the packages as the README says', () => {
  // Outside the repository, so nothing resolves through the workspace's node_modules.
  const project = mkdtempSync(join(tmpdir(), 'trtllm-docs-'));
  const tarballs = join(project, 'tarballs');
  const app = join(project, 'app');
  let installOutput = '';
  let typecheck = { status: 0 as number | string, output: '' };
  const origins = new Map<string, string[]>();
  let fake: FakeTriton;

  afterAll(async () => {
    await fake?.close();
    rmSync(project, { recursive: true, force: true });
  });

  beforeAll(async () => {
    fake = await startFakeTriton();
    // The README's pack command is `pnpm pack:all`, which builds and then runs this script; the suite
    // has built already.
    expect(quickstart('pack')).toBe('pnpm pack:all');
    const packed = await run('bash', [join(root, 'scripts', 'pack-all.sh'), tarballs], { cwd: root });
    if (packed.status !== 0) throw new Error(`pack-all.sh failed:\n${packed.output}`);

    // The README's install command, with its clone path replaced by where the tarballs are.
    const install = quickstart('install-packed');
    if (!install?.includes('build/packages/*.tgz'))
      throw new Error('README.md has no quickstart:install-packed');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'my-app', private: true, type: 'module' }),
    );
    const env = {
      ...process.env,
      CI: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_prefer_offline: 'true',
    };
    const command = install.replace(/\S*build\/packages\/\*\.tgz/, `${tarballs}/*.tgz`);
    const installed = await run('bash', ['-c', command], { cwd: app, env });
    installOutput = installed.output;
    if (installed.status !== 0) throw new Error(`${command} failed:\n${installed.output}`);
    const extras = THIRD_PARTY.map((name) => `${name}@${installedVersion(name)}`);
    const more = await run('npm', ['i', '--loglevel=warn', ...extras], { cwd: app, env });
    if (more.status !== 0) throw new Error(`npm i ${extras.join(' ')} failed:\n${more.output}`);

    // Every group as a file, compiled strict to JavaScript, which the runnable ones then run.
    mkdirSync(join(app, 'snippets'));
    for (const group of GROUPS) {
      const { text, origin } = source(group, RUNNABLE.includes(group) ? fake : undefined);
      writeFileSync(join(app, 'snippets', `${group.name}.ts`), text);
      origins.set(group.name, origin);
    }
    const compilerOptions = {
      strict: true,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      // A pasted block is a module of its own (top-level await), whether or not it imports.
      moduleDetection: 'force',
      types: ['node'],
      skipLibCheck: true,
      rootDir: 'snippets',
      outDir: 'out',
    };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['snippets'] }));
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    typecheck = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: app });
  }, 900_000);

  it('the README pack command writes one tarball per package, and its install command installs them with their commands', async () => {
    expect(installOutput).not.toMatch(/ERR!/);
    for (const name of ['@trtllm/sdk', '@trtllm/grpc', '@trtllm/http', '@trtllm/testing', '@trtllm/openai']) {
      expect(existsSync(join(app, 'node_modules', name, 'dist', 'index.js'))).toBe(true);
    }
    // The bins are the committed shims, and they load the build.
    for (const bin of ['trtllm-fake-triton', 'trtllm-openai', 'trtllm-bench']) {
      const help = await run(join(app, 'node_modules', '.bin', bin), ['--help'], {
        cwd: app,
        timeout: 30_000,
      });
      expect({ bin, status: help.status }).toEqual({ bin, status: 0 });
      expect(help.output).toMatch(new RegExp(`usage: ${bin}`, 'i'));
    }
  });

  it('every block found has code, and a block that continues another says so in its first line', () => {
    expect(GROUPS.length).toBeGreaterThan(20);
    const unmarked = GROUPS.flatMap((g) => g.blocks.slice(1))
      .filter((b) => !/^\/\/ continues\b/.test(b.code.trimStart()))
      .map((b) => `${b.file}:${b.line}: starts without a "// continues ..." line`);
    expect(unmarked).toEqual([]);
  });

  it('type-checks every TypeScript block, strict, as a user would paste it', () => {
    // tsc reports `snippets/<group>.ts(line,col): error TS....`; each is turned into the Markdown line.
    const errors = typecheck.output
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const m = /^snippets\/(.+?)\.ts\((\d+),(\d+)\): (.*)$/.exec(line);
        if (!m) return line;
        const at = origins.get(m[1]!)?.[Number(m[2]) - 1] ?? `${m[1]} line ${m[2]}`;
        return `${at}:${m[3]}: ${m[4]}`;
      });
    expect(errors).toEqual([]);
    expect(typecheck.status).toBe(0);
  });

  it('marks blocks that run, each pointing at a local Triton', () => {
    expect(RUNNABLE.length).toBeGreaterThan(3);
    for (const group of RUNNABLE) {
      const { text } = source(group);
      expect({ group: group.name, local: LOCAL.some((url) => text.includes(url)) }).toEqual({
        group: group.name,
        local: true,
      });
    }
  });

  it.each(RUNNABLE.map((g) => [`${g.blocks[0]!.file}:${g.blocks[0]!.line}`, g] as const))(
    'the block at %s runs against the fake, sends it a request and exits by itself',
    async (_, group) => {
      const script = join(app, 'out', `${group.name}.js`);
      expect(existsSync(script)).toBe(true);
      const before = fake.events().length;
      const env = { ...process.env };
      for (const key of Object.keys(env)) if (key.startsWith('TRITON_')) delete env[key];
      const result = await run(process.execPath, [script], { cwd: app, env, timeout: 30_000 });
      expect({ status: result.status, output: result.status === 0 ? '' : result.output }).toEqual({
        status: 0,
        output: '',
      });
      expect(
        fake
          .events()
          .slice(before)
          .some((e) => e.event === 'received'),
      ).toBe(true);
    },
    60_000,
  );
});
