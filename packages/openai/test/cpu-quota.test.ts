import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { cgroupCpuLimit } from '../src/cpu-quota.js';
import { workersFlag } from '../src/workers.js';

// The files the kernel shows, laid out under a directory of their own as they sit under `/`.
const roots: string[] = [];
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'cgroup-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}
/** A cgroup v1 cpu controller's two files for the cgroup at `dir` (under `sys/fs/cgroup/`). */
function v1Files(dir: string, quota: number, period = 100_000): Record<string, string> {
  return {
    [`sys/fs/cgroup/${dir}/cpu.cfs_quota_us`]: `${quota}\n`,
    [`sys/fs/cgroup/${dir}/cpu.cfs_period_us`]: `${period}\n`,
  };
}
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('cgroupCpuLimit (the CPU limit --workers auto keeps to)', () => {
  test('cgroup v2 in a container: cpu.max at the mount root, rounded up (1500m is 2)', () => {
    const root = tree({ 'proc/self/cgroup': '0::/\n', 'sys/fs/cgroup/cpu.max': '150000 100000\n' });
    expect(cgroupCpuLimit(root)).toBe(2);
  });

  test('cgroup v2 on a host: the smallest quota of the cgroup and its ancestors', () => {
    const root = tree({
      'proc/self/cgroup': '0::/kubepods.slice/pod-a.slice/ctr.scope\n',
      'sys/fs/cgroup/kubepods.slice/cpu.max': 'max 100000\n',
      'sys/fs/cgroup/kubepods.slice/pod-a.slice/cpu.max': '100000 100000\n',
      'sys/fs/cgroup/kubepods.slice/pod-a.slice/ctr.scope/cpu.max': '400000 100000\n',
    });
    expect(cgroupCpuLimit(root)).toBe(1);
  });

  test('cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us of the cpu hierarchy (half a CPU is one)', () => {
    const root = tree({
      'proc/self/cgroup': '11:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n',
      ...v1Files('cpu,cpuacct/docker/abc', 250_000),
      ...v1Files('cpu,cpuacct', -1),
    });
    expect(cgroupCpuLimit(root)).toBe(3);
    const half = tree({
      'proc/self/cgroup': '1:cpu:/\n',
      ...v1Files('cpu', 50_000),
    });
    expect(cgroupCpuLimit(half)).toBe(1);
  });

  test('cgroup v1 in a cgroup namespace: a path missing under the mount reads the mount root', () => {
    const root = tree({
      'proc/self/cgroup': '4:cpu,cpuacct:/kubepods/burstable/pod-a/ctr\n',
      ...v1Files('cpu,cpuacct', 200_000),
    });
    expect(cgroupCpuLimit(root)).toBe(2);
  });

  test('no limit: v2 "max", v1 -1, files unreadable or not numbers, no /proc at all', () => {
    expect(
      cgroupCpuLimit(tree({ 'proc/self/cgroup': '0::/\n', 'sys/fs/cgroup/cpu.max': 'max 100000\n' })),
    ).toBe(undefined);
    const v1 = tree({
      'proc/self/cgroup': '4:cpu:/\n',
      ...v1Files('cpu', -1),
    });
    expect(cgroupCpuLimit(v1)).toBe(undefined);
    expect(cgroupCpuLimit(tree({ 'proc/self/cgroup': '0::/\n', 'sys/fs/cgroup/cpu.max': 'garbage\n' }))).toBe(
      undefined,
    );
    expect(cgroupCpuLimit(tree({}))).toBe(undefined);
  });

  test('--workers auto takes the smaller of the usable cores and the limit; a number is taken as given', () => {
    const one = tree({ 'proc/self/cgroup': '0::/\n', 'sys/fs/cgroup/cpu.max': '100000 100000\n' });
    expect(workersFlag('auto', one)).toBe(1);
    const many = tree({ 'proc/self/cgroup': '0::/\n', 'sys/fs/cgroup/cpu.max': '6400000 100000\n' });
    expect(workersFlag('auto', many)).toBe(Math.min(64, availableParallelism()));
    expect(workersFlag('auto', tree({}))).toBe(availableParallelism());
    expect(workersFlag('3', one)).toBe(3);
  });
});
