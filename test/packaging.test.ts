import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
