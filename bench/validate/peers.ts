/**
 * The peer tools, installed by the benchmark itself in a venv of their own (`build/venv-peers`,
 * under the ignored build directory), at pinned versions:
 * - `perf_analyzer` (C++) ships in the `tritonclient[all]` 2.50.0 wheel (newer wheels do not); it
 *   links `libb64.so.0d` (Debian `libb64-0d`) and `libcudart.so.12` (`nvidia-cuda-runtime-cu12`).
 * - `genai-perf` 0.0.16 runs that perf_analyzer (it needs the 2.50 export format).
 * A tool that cannot be installed or started on this machine is reported with the reason, and
 * the run goes on without it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const PEER_PINS = [
  'tritonclient[all]==2.50.0',
  'genai-perf==0.0.16',
  'nvidia-cuda-runtime-cu12==12.9.79',
] as const;

export interface Peers {
  /** Path of the perf_analyzer binary, or why it cannot run here. */
  readonly perfAnalyzer: { readonly path: string } | { readonly skipped: string };
  /** Path of the genai-perf script, or why it cannot run here. */
  readonly genaiPerf: { readonly path: string } | { readonly skipped: string };
  /** Environment both need: the CUDA runtime's libraries, the venv's bin first on PATH, no hub access. */
  readonly env: NodeJS.ProcessEnv;
  readonly versions: Readonly<Record<string, string>>;
}

function run(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv) {
  return spawnSync(cmd, args, { encoding: 'utf8', env: env ?? process.env, timeout: 900_000 });
}

/** Whether the dynamic linker can find libb64; if not, installs Debian's `libb64-0d` when root. */
function ensureLibb64(): string | undefined {
  const has = () => /libb64\.so\.0d/.test(run('ldconfig', ['-p']).stdout ?? '');
  if (has()) return undefined;
  if (process.getuid?.() !== 0)
    return 'libb64.so.0d is missing and this user cannot apt-get install libb64-0d';
  console.log('installing libb64-0d (apt-get) for perf_analyzer ...');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let apt = run('apt-get', ['install', '-y', '-qq', 'libb64-0d'], env);
  if (apt.status !== 0) {
    run('apt-get', ['update', '-qq'], env);
    apt = run('apt-get', ['install', '-y', '-qq', 'libb64-0d'], env);
  }
  if (apt.status !== 0 || !has())
    return `apt-get install libb64-0d failed: ${(apt.stderr ?? '').trim().slice(-300)}`;
  return undefined;
}

/** Makes (or reuses) the venv and reports what can run. Never throws: failures become skip reasons. */
export function ensurePeers(root: string): Peers {
  const venv = join(root, 'build', 'venv-peers');
  const python = join(venv, 'bin', 'python');
  const stamp = join(venv, '.trtllm-pins');
  const pins = PEER_PINS.join(' ');
  const pinned = existsSync(stamp) && run('cat', [stamp]).stdout.trim() === pins;
  let installError: string | undefined;
  if (!pinned) {
    console.log(`making ${venv} with ${pins} (about 1 GB, a few minutes) ...`);
    if (!existsSync(python)) {
      const made = run('python3', ['-m', 'venv', venv]);
      if (made.status !== 0) installError = `python3 -m venv failed: ${made.stderr.trim().slice(-300)}`;
    }
    if (installError === undefined) {
      const pip = run(python, [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        ...PEER_PINS,
      ]);
      if (pip.status !== 0) installError = `pip install failed: ${pip.stderr.trim().slice(-500)}`;
      else run('sh', ['-c', `echo '${pins}' > '${stamp}'`]);
    }
  }
  const site = run(python, ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']).stdout.trim();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LD_LIBRARY_PATH: [join(site, 'nvidia', 'cuda_runtime', 'lib'), process.env.LD_LIBRARY_PATH]
      .filter((p) => p !== undefined && p !== '')
      .join(':'),
    PATH: `${join(venv, 'bin')}:${process.env.PATH ?? ''}`,
    // genai-perf must never reach for a tokenizer on a hub: it gets a local directory.
    HF_HUB_OFFLINE: '1',
    TRANSFORMERS_OFFLINE: '1',
  };
  const versions: Record<string, string> = {};
  const paBin = join(venv, 'bin', 'perf_analyzer');
  let perfAnalyzer: Peers['perfAnalyzer'];
  if (installError !== undefined) perfAnalyzer = { skipped: installError };
  else {
    const lib = ensureLibb64();
    const probe = run(paBin, ['--version'], env);
    if (lib !== undefined) perfAnalyzer = { skipped: lib };
    else if (probe.status !== 0)
      perfAnalyzer = {
        skipped: `perf_analyzer does not start: ${(probe.stderr || probe.stdout).trim().slice(-300)}`,
      };
    else perfAnalyzer = { path: paBin };
  }
  let genaiPerf: Peers['genaiPerf'];
  const gpBin = join(venv, 'bin', 'genai-perf');
  if (installError !== undefined) genaiPerf = { skipped: installError };
  else if ('skipped' in perfAnalyzer)
    genaiPerf = { skipped: `it runs perf_analyzer: ${perfAnalyzer.skipped}` };
  else {
    const probe = run(gpBin, ['--version'], env);
    genaiPerf =
      probe.status === 0
        ? { path: gpBin }
        : { skipped: `genai-perf does not start: ${(probe.stderr || probe.stdout).trim().slice(-300)}` };
  }
  if (installError === undefined) {
    const listed = run(python, [
      '-c',
      'import importlib.metadata as m\nfor p in ("tritonclient","genai-perf","nvidia-cuda-runtime-cu12","transformers"): print(p, m.version(p))',
    ]).stdout;
    for (const line of listed.trim().split('\n')) {
      const [name, version] = line.split(' ');
      if (name !== undefined && version !== undefined) versions[name] = version;
    }
  }
  return { perfAnalyzer, genaiPerf, env, versions };
}
