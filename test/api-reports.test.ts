import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { apiEntries, runApiReports } from '../scripts/api-report.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const temp = mkdtempSync(join(tmpdir(), 'trtllm-api-test-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

// Like test/packaging, this reads dist/: `pnpm test` builds first. A report that differs here means a public
// API changed without `pnpm api:update`, the same failure `pnpm api:check` gives in CI.
describe('the API reports (packages/*/api/*.api.md)', () => {
  it('cover every entry point of every package and match the build', { timeout: 120_000 }, () => {
    const run = runApiReports();
    const packages = readdirSync(join(root, 'packages')).filter((dir) =>
      existsSync(join(root, 'packages', dir, 'package.json')),
    );
    expect(new Set(run.entries.map((e) => e.dir))).toEqual(new Set(packages));
    // The subpaths count too: the SDK's transport kit and the HTTP transport's Node entry.
    expect(run.entries.map((e) => `${e.name}:${e.entry}`)).toEqual(
      expect.arrayContaining([
        '@trtllm/sdk:index',
        '@trtllm/sdk:transport',
        '@trtllm/http:index',
        '@trtllm/http:node',
      ]),
    );
    const differing = run.entries
      .filter((e) => e.status !== 'same')
      .map((e) => `${e.name} (${e.entry}): ${e.status}\n${e.diff ?? ''}`);
    expect(differing, 'run `pnpm build && pnpm api:update` and commit the reports').toEqual([]);
    expect(run.stale).toEqual([]);
    expect(run.entries.flatMap((e) => e.problems)).toEqual([]);
  });

  it('finds a changed, a missing and a stale report, and rewrites none of them in check mode', {
    timeout: 120_000,
  }, () => {
    const [node, transport] = [
      apiEntries().find((e) => e.name === '@trtllm/http' && e.entry === 'node'),
      apiEntries().find((e) => e.name === '@trtllm/sdk' && e.entry === 'transport'),
    ];
    if (node === undefined || transport === undefined)
      throw new Error('no @trtllm/http node or sdk transport entry');
    // The checked-in report with one member's type changed, as if the build had changed it.
    const committed = readFileSync(node.report, 'utf8');
    const member = /^ {4}readonly (\w+)\?: number;$/m.exec(committed);
    if (member === null) throw new Error(`no optional number member in ${node.report}`);
    const edited = committed.replace(member[0], `    readonly ${member[1]}?: string;`);
    writeFileSync(join(temp, 'node.api.md'), edited);
    writeFileSync(join(temp, 'gone.api.md'), committed);

    const run = runApiReports({
      entries: [
        { ...node, report: join(temp, 'node.api.md') },
        { ...transport, report: join(temp, 'transport.api.md') },
      ],
    });

    const [changed, missing] = run.entries;
    expect(changed?.status).toBe('changed');
    expect(changed?.diff).toContain(`-    readonly ${member[1]}?: string;`);
    expect(changed?.diff).toContain(`+${member[0]}`);
    expect(missing?.status).toBe('missing');
    expect(run.stale).toEqual([expect.stringMatching(/gone\.api\.md$/)]);
    expect(readFileSync(join(temp, 'node.api.md'), 'utf8')).toBe(edited);
    expect(readdirSync(temp).sort()).toEqual(['gone.api.md', 'node.api.md']);
  });
});
