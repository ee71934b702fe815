/** Real Tritons of a test's own, beside the suite's shared one, and the model-control calls the SDK does not make. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  credentials,
  type GrpcObject,
  loadPackageDefinition,
  type ServiceClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { freePorts } from '../reliability/support/processes.js';
import { requirePid, tritonFiles } from './triton-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PROTO_DIR = join(ROOT, 'proto');

/** A real Triton of a test's own on free ports, beside the suite's shared one. */
export interface OwnTriton {
  /** `grpc://` address, as trtllm-openai's `--triton` takes it. */
  readonly grpc: string;
  readonly http: string;
  readonly pid: number;
  stop(): void;
}

/**
 * Starts a real Triton on free ports with `args` (tritonserver flags) over `modelRepository` (the
 * suite's, test/triton/models, unless given); its event log lives in a directory `stop()` removes.
 */
export async function startOwnTriton(
  options: { readonly args?: readonly string[]; readonly modelRepository?: string } = {},
): Promise<OwnTriton> {
  const [http, grpc, metrics] = await freePorts(3);
  const dir = mkdtempSync(join(tmpdir(), 'trtllm-own-triton-'));
  const env = {
    ...process.env,
    TRITON_HTTP_PORT: String(http),
    TRITON_GRPC_PORT: String(grpc),
    TRITON_METRICS_PORT: String(metrics),
    TRTLLM_FAKE_EVENT_LOG: join(dir, 'events.jsonl'),
    ...(options.modelRepository !== undefined ? { TRITON_MODEL_REPOSITORY: options.modelRepository } : {}),
    TRITON_EXTRA_ARGS: (options.args ?? []).join(' '),
  };
  execFileSync('bash', ['scripts/triton-up.sh'], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
  // The pid file is what triton-down.sh stops; read here so a failed start shows up at once.
  const pid = requirePid(tritonFiles(String(http)).pidFile);
  return {
    grpc: `grpc://127.0.0.1:${grpc}`,
    http: `http://127.0.0.1:${http}`,
    pid,
    stop: () => {
      execFileSync('bash', ['scripts/triton-down.sh'], { cwd: ROOT, env, stdio: 'inherit' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A real Triton of its own under `--model-control-mode=explicit`, loading only `loadModels`. */
export function startExplicitTriton(loadModels: readonly string[]): Promise<OwnTriton> {
  return startOwnTriton({
    args: ['--model-control-mode=explicit', ...loadModels.map((m) => `--load-model=${m}`)],
  });
}

/** A RepositoryModelLoad or RepositoryModelUnload call, made with grpc-js (the SDK has no such call): its error. */
export async function repositoryControl(
  grpcUrl: string,
  action: 'load' | 'unload',
  model: string,
): Promise<ServiceError | null> {
  const definition = loadSync('inference/grpc_service.proto', { includeDirs: [PROTO_DIR], keepCase: true });
  const inference = loadPackageDefinition(definition).inference as GrpcObject;
  const Service = inference.GRPCInferenceService as ServiceClientConstructor;
  const client = new Service(new URL(grpcUrl).host, credentials.createInsecure());
  const method = action === 'load' ? 'RepositoryModelLoad' : 'RepositoryModelUnload';
  try {
    return await new Promise<ServiceError | null>((resolve) => {
      (client[method] as (r: object, cb: (e: ServiceError | null) => void) => void)(
        { model_name: model },
        resolve,
      );
    });
  } finally {
    client.close();
  }
}
