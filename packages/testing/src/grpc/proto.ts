/**
 * Loads our `proto/` (the one thing the fake shares with the client). The published package carries
 * a copy in `proto/` beside `dist/`; in the repository the sources read the root `proto/`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options, type PackageDefinition } from '@grpc/proto-loader';

const SERVICE_FILE = join('inference', 'grpc_service.proto');

function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes('"@trtllm/testing"')) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('@trtllm/testing: cannot find its own package.json');
    dir = parent;
  }
}

/** The directory holding `inference/grpc_service.proto`. */
export function protoDir(): string {
  const root = packageRoot();
  const candidates = [join(root, 'proto'), join(root, '..', '..', 'proto')];
  const found = candidates.find((d) => existsSync(join(d, SERVICE_FILE)));
  if (!found) throw new Error(`@trtllm/testing: no ${SERVICE_FILE} under ${candidates.join(' or ')}`);
  return found;
}

/** How requests decode: proto field names, 64-bit integers as strings, enums by name. */
export const LOADER_OPTIONS: Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
};

let cached: PackageDefinition | undefined;

export function loadInferenceProto(): PackageDefinition {
  cached ??= loadSync(SERVICE_FILE, { ...LOADER_OPTIONS, includeDirs: [protoDir()] });
  return cached;
}

export function inferenceService(): ServiceDefinition {
  return loadInferenceProto()['inference.GRPCInferenceService'] as ServiceDefinition;
}
