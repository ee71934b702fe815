/**
 * The real Triton 2.51 (CPU) of scripts/triton-up.sh, started on free ports of its own so that it
 * cannot collide with a `pnpm triton:up` server someone else is using, serving the model repository
 * of test/triton/models with the generator's `ttft_ms` / `itl_ms` set to the delays the fake gets:
 * a copy of each `config.pbtxt`, and the version directories linked to the originals (the models
 * resolve their code through the link, see `models/<name>/1/model.py`).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface TritonProcess {
  readonly grpcAddress: string;
  readonly httpUrl: string;
  readonly version: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

async function pacedRepository(root: string, dir: string, ttftMs: number, itlMs: number): Promise<void> {
  const source = join(root, 'test', 'triton', 'models');
  await rm(dir, { recursive: true, force: true });
  for (const model of await readdir(source)) {
    await mkdir(join(dir, model), { recursive: true });
    await symlink(join(source, model, '1'), join(dir, model, '1'));
    const config = (await readFile(join(source, model, 'config.pbtxt'), 'utf8'))
      .replace(/(key: "ttft_ms"\s*value: \{ string_value: ")[^"]*/, `$1${ttftMs}`)
      .replace(/(key: "itl_ms"\s*value: \{ string_value: ")[^"]*/, `$1${itlMs}`);
    await writeFile(join(dir, model, 'config.pbtxt'), config);
  }
}

/** Starts it, or throws with the reason it cannot run on this machine (setup or start-up failure). */
export async function startTriton(
  root: string,
  options: { readonly ttftMs: number; readonly itlMs: number; readonly workDir: string },
): Promise<TritonProcess> {
  const setup = spawnSync('bash', ['-c', 'scripts/triton-setup.sh --check || scripts/triton-setup.sh'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  if (setup.status !== 0)
    throw new Error(`scripts/triton-setup.sh failed: ${setup.stderr.trim().slice(-500)}`);
  const venvPython = join(root, '.venv-triton', 'bin', 'python');
  const info = spawnSync(
    venvPython,
    [
      '-c',
      'import sysconfig; print(sysconfig.get_paths()["purelib"]); print(sysconfig.get_config_var("LIBDIR"))',
    ],
    { encoding: 'utf8' },
  );
  const [site = '', libdir = ''] = info.stdout.trim().split('\n');
  const repository = join(options.workDir, 'models');
  await pacedRepository(root, repository, options.ttftMs, options.itlMs);
  const [http, grpc, metrics] = [await freePort(), await freePort(), await freePort()];
  const log = createWriteStream(join(options.workDir, 'triton.log'));
  const child: ChildProcess = spawn(
    join(site, 'pytriton', 'tritonserver', 'bin', 'tritonserver'),
    [
      `--model-repository=${repository}`,
      `--backend-directory=${join(root, 'build', 'triton-backends')}`,
      ...[
        '--http-address=127.0.0.1',
        `--http-port=${http}`,
        '--grpc-address=127.0.0.1',
        `--grpc-port=${grpc}`,
      ],
      ...['--metrics-address=127.0.0.1', `--metrics-port=${metrics}`, '--exit-timeout-secs=5'],
    ],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        // libpython for the stub, libcudart from the wheel; the venv first so the stub imports its numpy.
        LD_LIBRARY_PATH: [libdir, join(site, 'nvidia_pytriton.libs'), process.env.LD_LIBRARY_PATH ?? '']
          .filter((p) => p !== '')
          .join(':'),
        PATH: `${join(root, '.venv-triton', 'bin')}:${process.env.PATH ?? ''}`,
        TRTLLM_FAKE_EVENT_LOG: join(options.workDir, 'triton-events.jsonl'),
      },
    },
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const httpUrl = `http://127.0.0.1:${http}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill('SIGTERM');
    // Triton waits --exit-timeout-secs for requests in flight, then unloads the models.
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await gone;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(
        `tritonserver exited with ${child.exitCode} during start-up; see ${join(options.workDir, 'triton.log')}`,
      );
    try {
      const ready = await fetch(`${httpUrl}/v2/health/ready`);
      if (ready.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`tritonserver not ready after 90 s; see ${join(options.workDir, 'triton.log')}`);
    }
    await sleep(200);
  }
  const meta = (await (await fetch(`${httpUrl}/v2`)).json()) as { version?: string };
  return { grpcAddress: `127.0.0.1:${grpc}`, httpUrl, version: meta.version ?? 'unknown', stop };
}
