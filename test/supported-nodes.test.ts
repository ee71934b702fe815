import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The exact versions `pnpm test` runs the whole suite on, as scripts/test-supported-nodes.sh lists them. */
function testedVersions(): string[] {
  const script = readFileSync(join(root, 'scripts', 'test-supported-nodes.sh'), 'utf8');
  const listed = /^SUPPORTED="([^"]+)"$/m.exec(script);
  expect(listed, 'scripts/test-supported-nodes.sh has a SUPPORTED="..." line').not.toBeNull();
  return listed![1]!.trim().split(/\s+/);
}

const engines = readdirSync(join(root, 'packages')).map((dir) => {
  const pkg = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as {
    name: string;
    engines?: { node?: string };
  };
  return [pkg.name, pkg.engines?.node] as const;
});

describe('the supported Node versions', () => {
  it('are the majors every package declares in engines, each tested by pnpm test', () => {
    const majors = testedVersions().map((v) => Number(v.split('.')[0]));
    expect(new Set(majors).size).toBe(majors.length);
    const range = majors.map((m) => `^${m}.0.0`).join(' || ');
    for (const [name, node] of engines) expect({ name, node }).toEqual({ name, node: range });
  });

  it('are run by the README test command through the test script', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const command = /<!-- quickstart:test -->\s*```sh\n([^\n]+)\n/.exec(readme)?.[1];
    expect(command).toBe('pnpm test');
    expect(manifest.scripts.test).toContain('scripts/test-supported-nodes.sh');
  });
});
