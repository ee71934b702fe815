import { readConfig, type VariantName } from '../../bench/overhead/config.js';
import { type OverheadResults, throughputRow } from '../../bench/overhead/results.js';

/** The row of one run of 1,000 tokens in which `variant` spent `usPerToken` per token. */
export function runRow(variant: VariantName, concurrency: number, usPerToken: number) {
  return throughputRow(variant, concurrency, [
    { tokens: 1000, requests: 32, wallMs: 1000, cpuUs: 1000 * usPerToken },
  ]);
}

/** Results of a run with nothing measured yet, on a made-up machine: tests fill in what they render. */
export function emptyResults(): OverheadResults {
  return {
    machine: {
      date: '2026-11-27T00:00:00Z',
      cpu: 'cpu',
      cores: 2,
      memoryGiB: 4,
      os: 'os',
      node: 'v20',
      pinned: false,
    },
    config: { ...readConfig(false), fakeServer: 'fake' },
    throughput: [],
    memory: [],
    targets: [],
    failures: [],
  };
}
