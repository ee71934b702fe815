import { spawnSync } from 'node:child_process';
import { cpus, release, totalmem, type } from 'node:os';

/** What the numbers were measured on. */
export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
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
    ...(extra.python !== undefined ? { python: extra.python } : {}),
    ...(extra.tritonclient !== undefined ? { tritonclient: extra.tritonclient } : {}),
    pinned: extra.pinned,
    date: new Date().toISOString(),
  };
}
