import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// `@opentelemetry/api` is an optional peer: the built core must load, run and type-check where it
// is not installed. The app sits in a temp dir with no node_modules above it but its own, which
// holds only core's package.json and dist, so nothing can resolve the api.
const core = fileURLToPath(new URL('..', import.meta.url));
const app = mkdtempSync(join(tmpdir(), 'trtllm-core-no-otel-'));
const pkg = join(app, 'node_modules', '@trtllm', 'sdk');
afterAll(() => rmSync(app, { recursive: true, force: true }));

// Builds a client with telemetry from a tracer-shaped object (not the api's) and says what it
// could resolve, so the run proves more than an import.
const SCRIPT = `
const tracer = { startSpan: () => ({ spanContext: () => ({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }) }) };
let apiResolves = true;
try { resolve('@opentelemetry/api'); } catch { apiResolves = false; }
const llm = new TritonLlm({ transport: { protocol: 'grpc' }, model: 'ensemble', telemetry: { tracer } });
console.log(JSON.stringify({ apiResolves, model: llm.model }));
`;

describe('the built core without @opentelemetry/api installed', () => {
  mkdirSync(pkg, { recursive: true });
  cpSync(join(core, 'dist'), join(pkg, 'dist'), { recursive: true });
  cpSync(join(core, 'package.json'), join(pkg, 'package.json'));

  it('loads with import and builds a client with telemetry', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { TritonLlm } from '@trtllm/sdk';
         import { createRequire } from 'node:module';
         const resolve = createRequire('${join(app, 'app.js')}').resolve;${SCRIPT}`,
      ],
      { encoding: 'utf8', cwd: app },
    );
    expect(JSON.parse(out)).toEqual({ apiResolves: false, model: 'ensemble' });
  });

  it('loads with require and builds a client with telemetry', () => {
    const out = execFileSync(
      process.execPath,
      ['-e', `const { TritonLlm } = require('@trtllm/sdk'); const resolve = require.resolve;${SCRIPT}`],
      { encoding: 'utf8', cwd: app },
    );
    expect(JSON.parse(out)).toEqual({ apiResolves: false, model: 'ensemble' });
  });

  it('type-checks an app that uses telemetry, with skipLibCheck off', () => {
    writeFileSync(join(app, 'package.json'), '{ "type": "module" }');
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          skipLibCheck: false,
          noEmit: true,
          types: [],
        },
        files: ['app.ts'],
      }),
    );
    writeFileSync(
      join(app, 'app.ts'),
      `import { type TelemetryOptions, type Transport, TritonLlm } from '@trtllm/sdk';
       declare const transport: Transport;
       declare const tracer: NonNullable<TelemetryOptions['tracer']>;
       export const llm = new TritonLlm({ transport, model: 'ensemble', telemetry: { tracer } });\n`,
    );
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    // tsc exits non-zero (and execFileSync throws with its output) on any error.
    const out = execFileSync(process.execPath, [tsc, '-p', app], { encoding: 'utf8', cwd: app });
    expect(out).toBe('');
  });
});
