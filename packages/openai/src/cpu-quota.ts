import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/**
 * The CPUs a Linux cgroup CPU quota (a container's CPU limit) lets this process use, rounded up;
 * undefined where no quota is set or none can be read. `os.availableParallelism()` counts the CPUs
 * the process may run on and ignores the quota, so a pod limited to 2 CPUs on a 64-core node would
 * get 64 workers from `--workers auto`, each throttled, and 64 times the memory.
 *
 * Read as the kernel writes them: `/proc/self/cgroup` names the process's cgroup; cgroup v2's
 * `cpu.max` holds `<quota|max> <period>`, cgroup v1's cpu controller `cpu.cfs_quota_us` (-1: none)
 * and `cpu.cfs_period_us`. A parent's quota binds its children, so the cgroup and each ancestor
 * count and the smallest wins. Inside a container with its own cgroup namespace the path may not
 * exist under the mount (the container sees its cgroup as the mount's root): the root's files are
 * the container's then. `root` is `/` but for tests, which lay the same files out elsewhere.
 */
export function cgroupCpuLimit(root = '/'): number | undefined {
  const membership = read(join(root, 'proc/self/cgroup'));
  if (membership === undefined) return undefined;
  let cpus: number | undefined;
  for (const line of membership.split('\n')) {
    // `hierarchy-id:controllers:path`; the path may itself hold colons.
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1);
    const found =
      controllers === ''
        ? smallest(join(root, 'sys/fs/cgroup'), path, v2Cpus)
        : controllers.split(',').includes('cpu')
          ? v1Mounts(root, controllers)
              .map((mount) => smallest(mount, path, v1Cpus))
              .find((n) => n !== undefined)
          : undefined;
    cpus = least(cpus, found);
  }
  return cpus;
}

/** Where a v1 hierarchy with `controllers` is usually mounted (`cpu,cpuacct` or `cpu`, or a link to it). */
function v1Mounts(root: string, controllers: string): string[] {
  return [...new Set([controllers, 'cpu,cpuacct', 'cpu'])].map((dir) => join(root, 'sys/fs/cgroup', dir));
}

/** The smallest limit of the cgroup at `path` under `mount` and of its ancestors; the mount's own when the path is not there. */
function smallest(
  mount: string,
  path: string,
  limit: (dir: string) => number | undefined,
): number | undefined {
  let cpus: number | undefined;
  let dir = posix.normalize(`/${path}`);
  for (;;) {
    cpus = least(cpus, limit(join(mount, dir)));
    if (dir === '/') return cpus;
    dir = posix.dirname(dir);
  }
}

/** cgroup v2: `cpu.max` is `max <period>` (no limit) or `<quota> <period>`, in microseconds. */
function v2Cpus(dir: string): number | undefined {
  const [quota, period] = (read(join(dir, 'cpu.max')) ?? '').trim().split(/\s+/);
  return cpusOf(Number(quota), Number(period));
}

/** cgroup v1: `cpu.cfs_quota_us` (-1: no limit) over `cpu.cfs_period_us`. */
function v1Cpus(dir: string): number | undefined {
  return cpusOf(Number(read(join(dir, 'cpu.cfs_quota_us'))), Number(read(join(dir, 'cpu.cfs_period_us'))));
}

/** Whole CPUs for a quota per period (half a CPU is one worker); undefined for no limit or unreadable numbers. */
function cpusOf(quota: number, period: number): number | undefined {
  if (!Number.isFinite(quota) || !Number.isFinite(period) || quota <= 0 || period <= 0) return undefined;
  return Math.max(1, Math.ceil(quota / period));
}

/** The smaller of two limits, either of which may be absent (no limit). */
function least(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
