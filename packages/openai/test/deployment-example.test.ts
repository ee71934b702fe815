import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type Stack, startStack } from './stack.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const example = (file: string) =>
  fileURLToPath(new URL(`../../../examples/openai-gateway/${file}`, import.meta.url));
const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

interface Probe {
  readonly httpGet: { readonly path: string; readonly port: string };
}
interface Container {
  readonly args: readonly string[];
  readonly ports: readonly { readonly name: string; readonly containerPort: number }[];
  readonly readinessProbe: Probe;
  readonly livenessProbe: Probe;
}
interface Manifest {
  readonly kind: string;
  readonly spec: {
    readonly template?: { readonly spec: { readonly containers: readonly Container[] } };
    readonly ports?: readonly { readonly name: string; readonly targetPort: string | number }[];
  };
}

async function manifests(): Promise<Manifest[]> {
  const docs = parseAllDocuments(await readFile(example('k8s/gateway.yaml'), 'utf8'));
  for (const doc of docs) expect(doc.errors).toEqual([]);
  return docs.map((d) => d.toJS() as Manifest);
}

describe('examples/openai-gateway', () => {
  test('the Kubernetes example parses, and every flag it passes is one trtllm-openai --help documents', async () => {
    const all = await manifests();
    expect(all.map((m) => m.kind)).toEqual(['Deployment', 'Service']);
    const container = all[0]!.spec.template!.spec.containers[0]!;
    const { stdout: help } = await promisify(execFile)(process.execPath, ['--import', 'tsx', cli, '--help'], {
      cwd: root,
    });
    const flags = container.args.filter((a) => a.startsWith('--'));
    expect(flags.length).toBeGreaterThan(0);
    for (const flag of flags) expect(help).toMatch(new RegExp(`^\\s+${flag} `, 'm'));
    const service = all[1]!;
    expect(service.spec.ports!.map((p) => p.name)).toEqual(['http', 'metrics']);
    expect(service.spec.ports!.every((p) => container.ports.some((c) => c.name === p.targetPort))).toBe(true);
  });

  describe('its probe and scrape paths are answered 200 by a serving gateway', () => {
    let stack: Stack;
    test('readiness, liveness and metrics', async () => {
      stack = await startStack({ model: 'ensemble' });
      try {
        const container = (await manifests())[0]!.spec.template!.spec.containers[0]!;
        const origin = new URL(stack.baseURL).origin;
        for (const path of [
          container.readinessProbe.httpGet.path,
          container.livenessProbe.httpGet.path,
          '/metrics',
        ]) {
          expect((await fetch(`${origin}${path}`)).status, path).toBe(200);
        }
      } finally {
        await stack.close();
      }
    });
  });

  test('the Dockerfile builds in stages and runs the gateway as a user other than root', async () => {
    const text = await readFile(example('Dockerfile'), 'utf8');
    expect(text.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    const user = /^USER (\S+)/m.exec(text)?.[1];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    const entry = /^ENTRYPOINT \[(.*)\]/m.exec(text)?.[1];
    // The command it runs is the package's own bin.
    const pkg = JSON.parse(
      await readFile(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8'),
    ) as {
      bin: Record<string, string>;
    };
    expect(entry).toContain(pkg.bin['trtllm-openai']!.replace(/^\.\//, '/app/'));
  });

  test('the models.json example is a --config the CLI accepts', async () => {
    const { modelsFromConfig } = await import('../src/cli-models.js');
    const read = await modelsFromConfig(example('models.json'));
    expect(read.all).toBe(false);
    const config = JSON.parse(await readFile(example('models.json'), 'utf8')) as {
      models: { model: string }[];
    };
    expect(read.all === false && read.models.map((m) => m.model)).toEqual(config.models.map((m) => m.model));
  });
});
