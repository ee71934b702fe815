import { readConfig } from '../../bench/overhead/config.js';
import type { OverheadResults } from '../../bench/overhead/results.js';

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
