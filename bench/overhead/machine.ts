import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem, type } from 'node:os';

/** What the numbers were measured on. */
export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  /** The `engines.node` range of @trtllm/sdk, where the run recorded it (runs since 2026-11-27). */
  readonly nodeEngines?: string;
  readonly python?: string;
  readonly tritonclient?: string;
  readonly pinned: boolean;
  readonly date: string;
}

export function describeMachine(extra: { python?: string; tritonclient?: string; pinned: boolean }): Machine {
  const lscpu = spawnSync('lscpu', [], { encoding: 'utf8' });
  const model = /Model name:\s*(.+)/.exec(lscpu.stdout ?? '')?.[1]?.trim();
  return {
    cpu: model ?? cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${type()} ${release()}`,
    node: process.version,
    nodeEngines: supportedNode(),
    ...(extra.python !== undefined ? { python: extra.python } : {}),
    ...(extra.tritonclient !== undefined ? { tritonclient: extra.tritonclient } : {}),
    pinned: extra.pinned,
    date: new Date().toISOString(),
  };
}

/** The `engines.node` range of @trtllm/sdk (`^22.0.0 || ^24.0.0 || ...`). */
export function supportedNode(): string {
  const url = new URL('../../packages/core/package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { engines: { node: string } }).engines.node;
}

/** Whether `version` (`v24.1.0`) has a major that `range`, a list of `^major...` terms, allows. */
export function withinEngines(version: string, range: string): boolean {
  const majors = [...range.matchAll(/\^(\d+)/g)].map((m) => m[1]);
  return majors.includes(/^v?(\d+)/.exec(version)?.[1]);
}

/** The Node the published runs are made on: one of those `pnpm test` runs (scripts/test-supported-nodes.sh). */
export const BENCH_NODE = '24.21.0';
