import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const packages = readdirSync(join(root, 'packages')).filter((d) => {
  try {
    return !JSON.parse(readFileSync(join(root, 'packages', d, 'package.json'), 'utf8')).private;
  } catch {
    return false;
  }
});
const out = mkdtempSync(join(tmpdir(), 'trtllm-pack-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

// `pnpm test` builds first, so dist/ is the real build output here.
describe.each(packages)('the published %s package', (dir) => {
  const pkgDir = join(root, 'packages', dir);
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, unknown>;
    bin?: Record<string, string>;
  };

  it('packs only built files, types, README, license (and declared assets)', () => {
    const tarball = execFileSync('pnpm', ['pack', '--pack-destination', out], {
      cwd: pkgDir,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .at(-1)!;
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((f) => f.replace(/^package\//, ''));
    expect(files).toContain('package.json');
    expect(files).toContain('README.md');
    expect(files).toContain('LICENSE');
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.cjs');
    expect(files).toContain('dist/index.d.ts');
    const unexpected = files.filter(
      (f) =>
        !/^(package\.json|README\.md|LICENSE|GENERATOR\.md|dist\/.+|bin\/[\w-]+\.js|proto\/.+\.proto)$/.test(
          f,
        ) || /\.test\./.test(f),
    );
    expect(unexpected).toEqual([]);
    // A command is a committed shim (bin/<name>.js, there before the build, so a fresh clone's
    // pnpm install links it without a warning) that loads a built file the tarball carries.
    for (const [command, target] of Object.entries(pkg.bin ?? {})) {
      expect(target).toBe(`./bin/${command}.js`);
      expect(files).toContain(target.slice(2));
      const shim = readFileSync(join(pkgDir, target), 'utf8');
      expect(shim.startsWith('#!/usr/bin/env node\n')).toBe(true);
      const loaded = /^import '\.\.\/(dist\/[\w./-]+)';$/m.exec(shim)?.[1];
      expect(files).toContain(loaded);
    }
  });

  it('loads with import and with require from its exports map', () => {
    const esm = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import * as m from '${pkgDir}/dist/index.js'; console.log(Object.keys(m).length)`,
      ],
      {
        encoding: 'utf8',
      },
    );
    const cjs = execFileSync(
      process.execPath,
      ['-e', `console.log(Object.keys(require('${pkgDir}/dist/index.cjs')).length)`],
      {
        encoding: 'utf8',
      },
    );
    expect(Number(esm)).toBeGreaterThan(0);
    expect(Number(cjs)).toBe(Number(esm));
    expect(pkg.exports['.']).toMatchObject({
      import: { types: './dist/index.d.ts' },
      require: { types: './dist/index.d.cts' },
    });
  });

  it('loads every subpath of its exports map with import and with require, each with its types', () => {
    const subpaths = Object.entries(pkg.exports).filter(
      ([path]) => path !== '.' && path !== './package.json',
    );
    for (const [path, conditions] of subpaths) {
      const { import: esm, require: cjs } = conditions as Record<
        'import' | 'require',
        Record<string, string>
      >;
      for (const file of [esm?.types, esm?.default, cjs?.types, cjs?.default]) {
        expect({ path, file, exists: file !== undefined && existsSync(join(pkgDir, file)) }).toEqual({
          path,
          file,
          exists: true,
        });
      }
      const count = (code: string, type: string[]) =>
        Number(execFileSync(process.execPath, [...type, '-e', code], { encoding: 'utf8' }));
      const imported = count(
        `import * as m from '${join(pkgDir, esm!.default!)}'; console.log(Object.keys(m).length)`,
        ['--input-type=module'],
      );
      const required = count(
        `console.log(Object.keys(require('${join(pkgDir, cjs!.default!)}')).length)`,
        [],
      );
      expect({ path, imported }).toEqual({ path, imported: required });
      expect(imported).toBeGreaterThan(0);
    }
  });
});

/** A workspace package's manifest, as far as linking its commands goes. */
interface Manifest {
  readonly name: string;
  readonly bin?: Record<string, string>;
  readonly engines?: { readonly node?: string };
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
}

// Issue #53: the quick start's `pnpm install` on a clean clone is quiet. A command whose bin target is
// a build output (dist/) does not exist before the build, and pnpm warns "Failed to create bin" once
// per package that depends on it (12 warnings, before the committed shims).
describe('pnpm install on a fresh clone of this repository', () => {
  const clone = mkdtempSync(join(tmpdir(), 'trtllm-clone-'));
  afterAll(() => rmSync(clone, { recursive: true, force: true }));

  it('links every workspace command and prints no bin warning (nor any other, on a supported Node)', async () => {
    const exec = promisify(execFile);
    // The committed tree, as a user clones it: no dist/, no node_modules. The working tree's own
    // node_modules are not touched.
    await exec('git', ['clone', '--quiet', root, clone]);
    // Offline from the store this workspace was installed from (named, in case the clone's folder is
    // on another filesystem, where pnpm would otherwise pick a store of its own).
    const { stdout: store } = await exec('pnpm', ['store', 'path'], { cwd: root });
    let output: string;
    try {
      const run = await exec(
        'pnpm',
        ['install', '--frozen-lockfile', '--offline', '--store-dir', store.trim()],
        { cwd: clone, env: { ...process.env, CI: 'true' }, maxBuffer: 64 * 1024 * 1024 },
      );
      output = `${run.stdout}\n${run.stderr}`;
    } catch (err) {
      const { stdout, stderr } = err as { stdout?: string; stderr?: string };
      throw new Error(`pnpm install failed in a fresh clone:\n${stdout ?? ''}\n${stderr ?? ''}`);
    }

    const manifests = readdirSync(join(clone, 'packages'))
      .filter((dir) => existsSync(join(clone, 'packages', dir, 'package.json')))
      .map((dir) => ({
        dir,
        pkg: JSON.parse(readFileSync(join(clone, 'packages', dir, 'package.json'), 'utf8')) as Manifest,
      }));
    // On a Node outside the packages' engines (the quick start allows Node 20), pnpm names each
    // package's engines: that warning is the one a user on that Node should see.
    const engines = manifests.find(({ pkg }) => pkg.name === '@trtllm/sdk')?.pkg.engines?.node ?? '';
    const majors = [...engines.matchAll(/\^(\d+)\./g)].map((m) => m[1]);
    expect(majors.length).toBeGreaterThan(0);
    const supported = majors.includes(process.versions.node.split('.')[0]);
    const warnings = output
      .split('\n')
      .filter((line) => /\bWARN\b|Failed to create bin/.test(line))
      .filter((line) => supported || !/Unsupported engine/.test(line));
    expect(warnings).toEqual([]);

    // Every command of a workspace package is linked into each workspace package that depends on it.
    const commands = new Map(manifests.map(({ pkg }) => [pkg.name, Object.keys(pkg.bin ?? {})]));
    const links: { readonly link: string; readonly exists: boolean }[] = [];
    for (const { dir, pkg } of manifests) {
      for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })) {
        for (const command of commands.get(dep) ?? []) {
          const link = `packages/${dir}/node_modules/.bin/${command}`;
          links.push({ link, exists: existsSync(join(clone, link)) });
        }
      }
    }
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((l) => !l.exists)).toEqual([]);
  }, 180_000);
});
