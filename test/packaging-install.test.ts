import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GIVE_UP_MS, lastCallAt, runUntilExit } from './lifetime/child-process.js';
import { installPacked, PUBLISHED_PACKAGES } from './support/packed-project.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The third-party packages the app brings itself, at the versions the workspace tests: the peers the
 * READMEs' install lines name, and Node's types, which a TypeScript app on Node has.
 */
const PEERS = ['ai', '@langchain/core', 'zod', '@types/node'] as const;

/** The Node majors every package's `engines` names (`pnpm test` runs this suite on each). */
const SUPPORTED_MAJORS = [22, 24, 26];
const supported = SUPPORTED_MAJORS.includes(Number(process.versions.node.split('.')[0]));

const fixtures = join(root, 'test', 'fixtures', 'consumer-typecheck');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** Runs a command without blocking the test worker; resolves with its status and output, never rejects. */
async function runAsync(
  command: string,
  args: readonly string[],
  cwd: string,
): Promise<{ status: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, CI: 'true' },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { status: 0, output: `${stdout}\n${stderr}` };
  } catch (err) {
    const { code, stdout, stderr } = err as { code?: number; stdout?: string; stderr?: string };
    return { status: typeof code === 'number' ? code : 1, output: `${stdout ?? ''}\n${stderr ?? ''}` };
  }
}

/**
 * The tsconfigs a user's project may have, all strict with the library checks on. Each program holds an
 * ES module and a CommonJS file, which read different conditions of the exports maps (`import` and
 * `require`); the browser one has no Node types, for the two packages that run in browsers.
 */
const TYPECHECKS: Record<string, { readonly options: Record<string, unknown>; readonly files: string[] }> = {
  'moduleResolution NodeNext, as ES module and as CommonJS': {
    options: { module: 'NodeNext', moduleResolution: 'NodeNext', types: ['node'] },
    files: ['consumer.mts', 'consumer.cts', 'consumer-require.cts'],
  },
  'moduleResolution Bundler, as ES module and as CommonJS': {
    options: { module: 'Preserve', moduleResolution: 'Bundler', types: ['node'] },
    files: ['consumer.ts', 'consumer-require.cts'],
  },
  'moduleResolution Bundler in a browser project (no Node types)': {
    options: { module: 'Preserve', moduleResolution: 'Bundler', types: [], lib: ['ES2022', 'DOM'] },
    files: ['browser.ts'],
  },
};

// Both integrations as a user gets them: packed tarballs installed into a project outside the
// workspace (no workspace links, no TypeScript sources), then loaded with import and with require.
const ESM_SCRIPT = `
import { createTriton } from '@trtllm/ai-sdk';
import { ChatTriton } from '@trtllm/langchain';
import { fakeScript, startFakeTriton } from '@trtllm/testing';
import { generateText } from 'ai';

const fake = await startFakeTriton();
const triton = createTriton({ grpcUrl: fake.grpcUrl });
const ai = await generateText({
  model: triton('tensorrt_llm_bls'),
  prompt: 'Hi ' + fakeScript('esm: from the AI SDK'),
  maxOutputTokens: 64,
});
const chat = new ChatTriton({ httpUrl: fake.httpUrl, model: 'tensorrt_llm_bls', maxTokens: 64 });
const lc = await chat.invoke('Hi ' + fakeScript('esm: from LangChain'));
console.log(JSON.stringify({ aiSdk: ai.text, finish: ai.finishReason, langchain: lc.content }));
await chat.close();
await triton.close();
await fake.close();
`;

const CJS_SCRIPT = `
const { createTriton } = require('@trtllm/ai-sdk');
const { ChatTriton } = require('@trtllm/langchain');
const { fakeScript, startFakeTriton } = require('@trtllm/testing');
const { generateText } = require('ai');

(async () => {
  const fake = await startFakeTriton();
  const triton = createTriton({ httpUrl: fake.httpUrl });
  const ai = await generateText({
    model: triton('ensemble'),
    prompt: 'Hi ' + fakeScript('cjs: from the AI SDK'),
    maxOutputTokens: 64,
  });
  const chat = new ChatTriton({ grpcUrl: fake.grpcUrl, model: 'ensemble', maxTokens: 64 });
  const lc = await chat.invoke('Hi ' + fakeScript('cjs: from LangChain'));
  console.log(JSON.stringify({ aiSdk: ai.text, finish: ai.finishReason, langchain: lc.content }));
  await chat.close();
  await triton.close();
  await fake.close();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

// A new user's first scripts (issue #53), as the README's first example and the AI SDK row write them:
// no close(), no process.exit(). They must end by themselves once their last call has. The fake runs in
// the test process (one in the script would keep it alive), its address and the prompts in the
// environment; each script prints the time its last call returned, as test/lifetime's scripts do.
const FIRST_SCRIPT = `
import { TritonLlm } from '@trtllm/sdk';
import { grpcTransport } from '@trtllm/grpc';

const llm = new TritonLlm({ transport: grpcTransport({ baseUrl: process.env.TRITON_GRPC_URL }), model: 'tensorrt_llm_bls' });
const reply = await llm.generate({ prompt: process.env.GENERATE_PROMPT, maxTokens: 64 });
let streamed = '';
const signal = AbortSignal.timeout(30_000);
for await (const chunk of llm.stream({ prompt: process.env.STREAM_PROMPT, maxTokens: 64 }, { signal })) {
  if (!chunk.done) streamed += chunk.text;
}
console.log(\`last call ended at \${Date.now()}\`);
console.log(JSON.stringify({ generated: reply.text, streamed }));
`;

const AI_SDK_SCRIPT = `
import { createTriton } from '@trtllm/ai-sdk';
import { generateText } from 'ai';

const triton = createTriton({ grpcUrl: process.env.TRITON_GRPC_URL });
const { text } = await generateText({
  model: triton('tensorrt_llm_bls'),
  prompt: process.env.GENERATE_PROMPT,
  maxOutputTokens: 64,
});
console.log(\`last call ended at \${Date.now()}\`);
console.log(JSON.stringify({ generated: text }));
`;

// As test/lifetime: exiting this soon after the last call is "by itself"; a script still alive after
// GIVE_UP_MS never ends by itself and is killed.
const EXIT_WITHIN_MS = 1000;

describe('the packages installed from their tarballs with npm into a fresh project', () => {
  // Outside the repository, so nothing resolves through the workspace's node_modules.
  const project = mkdtempSync(join(tmpdir(), 'trtllm-install-'));
  afterAll(() => rmSync(project, { recursive: true, force: true }));
  let installLog = '';

  beforeAll(async () => {
    writeFileSync(join(project, 'esm.mjs'), ESM_SCRIPT);
    writeFileSync(join(project, 'cjs.cjs'), CJS_SCRIPT);
    writeFileSync(join(project, 'first-script.mjs'), FIRST_SCRIPT);
    writeFileSync(join(project, 'ai-sdk-script.mjs'), AI_SDK_SCRIPT);
    for (const file of ['consumer.ts', 'consumer-require.cts', 'browser.ts']) {
      copyFileSync(join(fixtures, file), join(project, file));
    }
    // The same source as an ES module and as CommonJS under Node's resolution.
    copyFileSync(join(fixtures, 'consumer.ts'), join(project, 'consumer.mts'));
    copyFileSync(join(fixtures, 'consumer.ts'), join(project, 'consumer.cts'));
    // Plain npm, as the READMEs' install lines say, on the Node that runs this suite (.ci/run puts each
    // supported version first on PATH).
    installLog = await installPacked(project, PUBLISHED_PACKAGES, PEERS);
  }, 600_000);

  const run = (script: string): { aiSdk: string; finish: string; langchain: string } => {
    const out = execFileSync(process.execPath, [script], { cwd: project, encoding: 'utf8', timeout: 60_000 });
    return JSON.parse(out.trim().split('\n').at(-1)!) as { aiSdk: string; finish: string; langchain: string };
  };

  it('installs the workspace packages from tarballs, not from links into the repository', () => {
    for (const [, name] of PUBLISHED_PACKAGES) {
      const manifest = join(project, 'node_modules', name, 'package.json');
      expect(existsSync(manifest)).toBe(true);
      expect(existsSync(join(project, 'node_modules', name, 'src'))).toBe(false);
    }
  });

  const engineWarnings = (): string[] =>
    installLog.split('\n').filter((line) => /EBADENGINE|Unsupported engine/i.test(line));

  it(`says nothing about engines on a supported Node (this is ${process.version})`, () => {
    if (supported) {
      expect(engineWarnings()).toEqual([]);
    } else {
      // The machine's own Node may be older than the supported ones (the quick start runs on it):
      // npm then names our packages' engines, which is what a user on that Node should see.
      expect(engineWarnings().join('\n')).toMatch(/@trtllm\/sdk/);
    }
  });

  it.each(Object.keys(TYPECHECKS))(
    'type-checks every public entry: %s, strict, skipLibCheck false',
    async (name) => {
      const { options, files } = TYPECHECKS[name]!;
      const config = `tsconfig.${name.replace(/\W+/g, '-')}.json`;
      const compilerOptions = {
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        target: 'ES2022',
        ...options,
      };
      writeFileSync(join(project, config), JSON.stringify({ compilerOptions, files }, null, 2));
      const check = await runAsync(process.execPath, [tsc, '-p', config, '--pretty', 'false'], project);
      expect(check.output.split('\n').filter((line) => line.trim() !== '')).toEqual([]);
      expect(check.status).toBe(0);
    },
    300_000,
  );

  it('an ES module app calls generateText and ChatTriton.invoke against the fake', () => {
    expect(run('esm.mjs')).toEqual({
      aiSdk: 'esm: from the AI SDK',
      finish: 'stop',
      langchain: 'esm: from LangChain',
    });
  }, 90_000);

  it('a CommonJS app does the same with require', () => {
    expect(run('cjs.cjs')).toEqual({
      aiSdk: 'cjs: from the AI SDK',
      finish: 'stop',
      langchain: 'cjs: from LangChain',
    });
  }, 90_000);

  describe('a first script over gRPC, without close()', () => {
    let fake: FakeTriton;
    beforeAll(async () => {
      fake = await startFakeTriton();
    });
    afterAll(async () => {
      await fake?.close();
    });

    const SCRIPTS: readonly [file: string, what: string, expected: Record<string, string>][] = [
      [
        'first-script.mjs',
        'TritonLlm over grpcTransport, generate() then a stream',
        { generated: 'from generate()', streamed: 'from stream()' },
      ],
      [
        'ai-sdk-script.mjs',
        'createTriton({ grpcUrl }) with generateText',
        { generated: 'from generateText' },
      ],
    ];

    it.each(SCRIPTS)(
      `%s (%s) exits with code 0 within ${EXIT_WITHIN_MS} ms of its last call`,
      async (file, _what, expected) => {
        const run = await runUntilExit([file], project, {
          TRITON_GRPC_URL: fake.grpcUrl,
          GENERATE_PROMPT: `Hi ${fakeScript(expected.generated!)}`,
          STREAM_PROMPT: `Hi ${fakeScript(expected.streamed ?? '')}`,
        });
        expect(run.killed, `still running after ${GIVE_UP_MS} ms:\n${run.stdout}\n${run.stderr}`).toBe(false);
        expect(run.code, run.stderr).toBe(0);
        expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toEqual(expected);
        const sinceLastCall = run.exitedAt - lastCallAt(run);
        expect(sinceLastCall).toBeGreaterThanOrEqual(0);
        expect(sinceLastCall).toBeLessThan(EXIT_WITHIN_MS);
      },
      60_000,
    );
  });
});
