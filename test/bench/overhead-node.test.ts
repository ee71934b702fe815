import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BENCH_NODE, supportedNode, withinEngines } from '../../bench/overhead/machine.js';
import { resultsMarkdown } from '../../bench/overhead/markdown.js';
import { emptyResults } from './overhead-results.js';

const machineLine = (node: string, nodeEngines?: string) => {
  const r = emptyResults();
  const text = resultsMarkdown({
    ...r,
    machine: { ...r.machine, node, ...(nodeEngines ? { nodeEngines } : {}) },
  });
  return text.split('\n').find((l) => l.startsWith('Measured')) ?? '';
};

describe('bench:overhead and the Node it ran on', () => {
  it('reads the packages’ engines, and tells a version inside them from one outside', () => {
    const core = JSON.parse(
      readFileSync(new URL('../../packages/core/package.json', import.meta.url), 'utf8'),
    ) as {
      engines: { node: string };
    };
    expect(supportedNode()).toBe(core.engines.node);
    const range = '^22.0.0 || ^24.0.0 || ^26.0.0';
    for (const v of ['v22.3.1', 'v24.21.0', 'v26.0.0', '26.10.0']) expect(withinEngines(v, range)).toBe(true);
    // The version the bench's warning tells users to run on is one pnpm test runs, inside the real range.
    const tested = /^SUPPORTED="([^"]+)"$/m.exec(
      readFileSync(new URL('../../scripts/test-supported-nodes.sh', import.meta.url), 'utf8'),
    )?.[1];
    expect(tested?.split(' ')).toContain(BENCH_NODE);
    expect(withinEngines(BENCH_NODE, supportedNode())).toBe(true);
    for (const v of ['v20.20.2', 'v2.0.0', 'v220.0.0', 'v23.1.0'])
      expect(withinEngines(v, range)).toBe(false);
  });

  it('says in the results when a run was made on a Node outside the engines, and only then', () => {
    const range = '^22.0.0 || ^24.0.0 || ^26.0.0';
    expect(machineLine('v20.20.2', range)).toContain(
      `Node v20.20.2 (outside the packages' engines, ${range})`,
    );
    expect(machineLine('v24.21.0', range)).toContain('Node v24.21.0.');
    expect(machineLine('v24.21.0', range)).not.toContain('outside');
    // Runs before the range was recorded say nothing either way.
    expect(machineLine('v20.20.2')).not.toContain('outside');
  });
});
