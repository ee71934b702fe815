import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { FakeEvent } from '@trtllm/testing';
import { readEventLog } from '../support/event-log.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const standIn = join(root, 'test/triton');

/** A real Triton of `scripts/triton-up.sh`, started by a test on ports of its own. */
export interface RealTriton {
  readonly grpcUrl: string;
  /** The generator models' events (GENERATOR.md "Event log"). */
  events(): FakeEvent[];
  /** The server's "GRPC KeepAlive Option" table (printed at `--log-verbose=1`), by option name. */
  keepaliveOptions(): Readonly<Record<string, number>>;
  stop(): Promise<void>;
}

/**
 * A model repository of copies of the raw stand-in `tensorrt_llm` (test/triton/models), one per
 * entry of `ttftMs`, each silent that long before its first token.
 */
export function silentModelRepository(ttftMs: Readonly<Record<string, number>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'trtllm-keepalive-'));
  // model.py imports the generator from three folders above itself: <dir>/fakegen.
  cpSync(join(standIn, 'fakegen'), join(dir, 'fakegen'), { recursive: true });
  const config = readFileSync(join(standIn, 'models/tensorrt_llm/config.pbtxt'), 'utf8');
  for (const [name, ms] of Object.entries(ttftMs)) {
    const model = join(dir, 'models', name);
    mkdirSync(join(model, '1'), { recursive: true });
    cpSync(join(standIn, 'models/tensorrt_llm/1/model.py'), join(model, '1/model.py'));
    const edited = config
      .replace(/^name: "tensorrt_llm"$/m, `name: "${name}"`)
      .replace(/(key: "ttft_ms"\s+value: \{ string_value: )"\d+"/, `$1"${ms}"`);
    if (!edited.includes(`name: "${name}"`) || !edited.includes(`string_value: "${ms}"`)) {
      throw new Error(
        'test/triton/models/tensorrt_llm/config.pbtxt no longer has the name and ttft_ms this test edits',
      );
    }
    writeFileSync(join(model, 'config.pbtxt'), edited);
  }
  return dir;
}

/**
 * Starts Triton on free loopback ports with the model repository under `repository` and the extra
 * server flags `args`. A server that does not start fails the caller (never a skip).
 */
export async function startTriton(repository: string, args: readonly string[]): Promise<RealTriton> {
  const [http, grpc, metrics] = await freePorts(3);
  const eventLog = join(repository, `events-${http}.jsonl`);
  const log = join(root, `build/triton-${http}.log`);
  const env = {
    ...process.env,
    TRITON_HTTP_PORT: String(http),
    TRITON_GRPC_PORT: String(grpc),
    TRITON_METRICS_PORT: String(metrics),
    TRTLLM_FAKE_EVENT_LOG: eventLog,
    TRITON_MODEL_REPOSITORY: join(repository, 'models'),
    TRITON_EXTRA_ARGS: args.join(' '),
  };
  try {
    await run('bash', ['scripts/triton-up.sh'], { cwd: root, env });
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`the real Triton did not start (scripts/triton-up.sh):\n${stdout}${stderr}`);
  }
  return {
    grpcUrl: `http://127.0.0.1:${grpc}`,
    events: () => readEventLog(eventLog),
    keepaliveOptions: () => keepaliveTable(readFileSync(log, 'utf8')),
    stop: async () => {
      await run('bash', ['scripts/triton-down.sh'], { cwd: root, env });
      rmSync(log, { force: true });
      rmSync(`${log}.prev`, { force: true });
    },
  };
}

async function freePorts(count: number): Promise<number[]> {
  // Held open together so the ports differ, then released for Triton (triton-up checks them again).
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((s) => {
      const address = s.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}

function keepaliveTable(log: string): Record<string, number> {
  const at = log.indexOf('GRPC KeepAlive Option');
  if (at < 0)
    throw new Error('the Triton log has no "GRPC KeepAlive Option" table (start it with --log-verbose=1)');
  const table: Record<string, number> = {};
  for (const line of log.slice(at).split('\n').slice(2)) {
    const row = /^\|\s*(\w+)\s*\|\s*(\d+)\s*\|$/.exec(line.trim());
    if (row === null) {
      if (line.startsWith('+')) break;
      continue;
    }
    table[row[1] as string] = Number(row[2]);
  }
  return table;
}
