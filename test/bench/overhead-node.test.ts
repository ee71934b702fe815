import { describe, expect, it } from 'vitest';
import { supportedNode, withinEngines } from '../../bench/overhead/machine.js';
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
  it('reads the supported majors from the packages’ engines', () => {
    const range = supportedNode();
    expect(range).toMatch(/\^\d+/);
    const majors = [...range.matchAll(/\^(\d+)/g)].map((m) => m[1]);
    for (const major of majors) expect(withinEngines(`v${major}.3.1`, range)).toBe(true);
    expect(withinEngines('v20.20.2', range)).toBe(majors.includes('20'));
    expect(withinEngines('v2.0.0', '^22.0.0 || ^24.0.0')).toBe(false);
    expect(withinEngines('v220.0.0', '^22.0.0')).toBe(false);
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
