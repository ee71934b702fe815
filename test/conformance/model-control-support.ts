import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PROTO_DIR = join(ROOT, 'proto');

/** A real Triton of its own under `--model-control-mode=explicit`: the suite's shared one keeps its models. */
export interface ExplicitTriton {
  /** `grpc://` address, as trtllm-openai's `--triton` takes it. */
  readonly grpc: string;
  readonly http: string;
  stop(): void;
}

/** Starts a real Triton on free ports over the suite's model repository, loading only `loadModels`. */
export async function startExplicitTriton(loadModels: readonly string[]): Promise<ExplicitTriton> {
  const [http, grpc, metrics] = await freePorts(3);
  const dir = mkdtempSync(join(tmpdir(), 'trtllm-explicit-'));
  const env = {
    ...process.env,
    TRITON_HTTP_PORT: String(http),
    TRITON_GRPC_PORT: String(grpc),
    TRITON_METRICS_PORT: String(metrics),
    TRTLLM_FAKE_EVENT_LOG: join(dir, 'events.jsonl'),
    TRITON_EXTRA_ARGS: ['--model-control-mode=explicit', ...loadModels.map((m) => `--load-model=${m}`)].join(
      ' ',
    ),
  };
  execFileSync('bash', ['scripts/triton-up.sh'], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
  // The pid file is what triton-down.sh stops; read here so a failed start shows up at once.
  readFileSync(join(ROOT, `build/triton-${http}.pid`), 'utf8');
  return {
    grpc: `grpc://127.0.0.1:${grpc}`,
    http: `http://127.0.0.1:${http}`,
    stop: () => {
      execFileSync('bash', ['scripts/triton-down.sh'], { cwd: ROOT, env, stdio: 'inherit' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
