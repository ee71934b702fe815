import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// `@opentelemetry/api` is an optional peer: the built core must load and run where it is not
// installed. The copy sits in a temp dir with no node_modules above it, so nothing can resolve it.
const core = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'trtllm-core-no-otel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The script builds a client with telemetry from a tracer-shaped object (not the api's) and
// records what it saw, so the run proves more than an import.
const SCRIPT = `
const tracer = { startSpan: () => ({ spanContext: () => ({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }) }) };
let apiResolves = true;
try { resolve('@opentelemetry/api'); } catch { apiResolves = false; }
const llm = new TritonLlm({ transport: { protocol: 'grpc' }, model: 'ensemble', telemetry: { tracer } });
console.log(JSON.stringify({ apiResolves, model: llm.model }));
`;

describe('the built core without @opentelemetry/api installed', () => {
  cpSync(join(core, 'dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(core, 'package.json'), join(dir, 'package.json'));

  it('loads with import and builds a client with telemetry', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { TritonLlm } from '${dir}/dist/index.js';
         import { createRequire } from 'node:module';
         const resolve = createRequire('${dir}/dist/index.js').resolve;${SCRIPT}`,
      ],
      { encoding: 'utf8', cwd: dir },
    );
    expect(JSON.parse(out)).toEqual({ apiResolves: false, model: 'ensemble' });
  });

  it('loads with require and builds a client with telemetry', () => {
    const out = execFileSync(
      process.execPath,
      [
        '-e',
        `const { TritonLlm } = require('${dir}/dist/index.cjs');
         const resolve = require.resolve;${SCRIPT}`,
      ],
      { encoding: 'utf8', cwd: dir },
    );
    expect(JSON.parse(out)).toEqual({ apiResolves: false, model: 'ensemble' });
  });
});
