import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const TRITONCLIENT_VERSION = '2.73.0';

/**
 * The Python of `.venv-bench`, made on first use with `tritonclient[grpc]` at the pinned version
 * (numpy comes with it). Returns the interpreter's path and versions, or why it could not be made.
 */
export function ensurePythonEnv(
  root: string,
): { python: string; pythonVersion: string; tritonclientVersion: string } | { error: string } {
  const venv = join(root, '.venv-bench');
  const python = join(venv, 'bin', 'python');
  const probe = () =>
    spawnSync(
      python,
      [
        '-c',
        'import sys, importlib.metadata as m, tritonclient.grpc, numpy; print(sys.version.split()[0], m.version("tritonclient"))',
      ],
      { encoding: 'utf8' },
    );
  let found = existsSync(python) ? probe() : undefined;
  if (found?.status === 0 && found.stdout.trim().endsWith(TRITONCLIENT_VERSION)) return parse(found.stdout);
  console.log(`making ${venv} with tritonclient[grpc]==${TRITONCLIENT_VERSION} ...`);
  const make = spawnSync('python3', ['-m', 'venv', venv], { encoding: 'utf8' });
  if (make.status !== 0) return { error: `python3 -m venv failed: ${make.stderr.trim()}` };
  const pip = spawnSync(
    join(venv, 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', `tritonclient[grpc]==${TRITONCLIENT_VERSION}`],
    { encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'] },
  );
  if (pip.status !== 0)
    return { error: `pip install tritonclient failed: ${(pip.stderr ?? '').trim().slice(-500)}` };
  found = probe();
  if (found.status !== 0)
    return { error: `tritonclient does not import: ${found.stderr.trim().slice(-500)}` };
  return parse(found.stdout);

  function parse(out: string) {
    const [pythonVersion = '', tritonclientVersion = ''] = out.trim().split(/\s+/);
    return { python, pythonVersion, tritonclientVersion };
  }
}
