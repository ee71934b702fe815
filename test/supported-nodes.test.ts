import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const script = join(root, 'scripts', 'test-supported-nodes.sh');

/** A line `NAME="..."` of scripts/test-supported-nodes.sh, split on spaces. */
function scriptList(name: string): string[] {
  const text = readFileSync(script, 'utf8');
  const listed = new RegExp(`^${name}="([^"]+)"$`, 'm').exec(text);
  expect(listed, `scripts/test-supported-nodes.sh has a ${name}="..." line`).not.toBeNull();
  return listed![1]!.trim().split(/\s+/);
}

/** The versions a mode of the script would run on the Node that runs this test, without running them. */
function plan(mode: 'once' | 'all' | 'others'): string[] {
  const env = { ...process.env };
  delete env.TEST_NODE_VERSIONS;
  // The script asks `node` on PATH which Node is at hand: put this test's own Node first.
  env.PATH = `${join(process.execPath, '..')}:${env.PATH ?? ''}`;
  return execFileSync('bash', [script, '--plan', `--${mode}`], { encoding: 'utf8', env })
    .trim()
    .split(/\s+/);
}

const major = (version: string): number => Number(version.split('.')[0]);
const engines = readdirSync(join(root, 'packages')).map((dir) => {
  const pkg = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as {
    name: string;
    engines?: { node?: string };
  };
  return [pkg.name, pkg.engines?.node] as const;
});
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

describe('the supported Node versions', () => {
  it('are the majors every package declares in engines', () => {
    const majors = scriptList('SUPPORTED').map(major);
    expect(new Set(majors).size).toBe(majors.length);
    const range = majors.map((m) => `^${m}.0.0`).join(' || ');
    for (const [name, node] of engines) expect({ name, node }).toEqual({ name, node: range });
  });

  it('pnpm test runs the suite once: on the Node at hand when it is supported, else on the LTS', () => {
    const atHand = major(process.versions.node);
    const supported = scriptList('SUPPORTED').map(major).includes(atHand);
    const [lts] = scriptList('LTS');
    expect(scriptList('SUPPORTED')).toContain(lts);
    expect(plan('once')).toEqual([supported ? 'current' : lts]);
    expect(manifest.scripts.test).toMatch(/scripts\/test-supported-nodes\.sh --once$/);
  });

  it('pnpm test:all-nodes runs it on every supported version', () => {
    expect(plan('all')).toEqual(scriptList('SUPPORTED'));
    expect(manifest.scripts['test:all-nodes']).toMatch(/scripts\/test-supported-nodes\.sh --all$/);
  });

  it('--others runs every supported major that --once did not, so CI runs each Node once', () => {
    const once = plan('once')[0]!;
    const onceMajor = once === 'current' ? major(process.versions.node) : major(once);
    const others = plan('others');
    expect(others.map(major)).not.toContain(onceMajor);
    expect([onceMajor, ...others.map(major)].sort()).toEqual(scriptList('SUPPORTED').map(major).sort());
  });

  it('CI runs the README test command and then the other Nodes', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const command = /<!-- quickstart:test -->\s*```sh\n([^\n]+)\n/.exec(readme)?.[1];
    expect(command).toBe('pnpm test');
    const ci = readFileSync(join(root, '.ci', 'run'), 'utf8');
    const readsReadme = ci.indexOf('eval "$test_cmd"');
    const others = ci.indexOf('bash scripts/test-supported-nodes.sh --others');
    expect(readsReadme).toBeGreaterThan(0);
    expect(others).toBeGreaterThan(readsReadme);
  });
});
