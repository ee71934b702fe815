import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The workspace packages an app using the two integrations installs, by folder and name. */
const PACKAGES: readonly (readonly [string, string])[] = [
  ['core', '@trtllm/sdk'],
  ['grpc', '@trtllm/grpc'],
  ['http', '@trtllm/http'],
  ['tokenizers', '@trtllm/tokenizers'],
  ['testing', '@trtllm/testing'],
  ['ai-sdk', '@trtllm/ai-sdk'],
  ['langchain', '@trtllm/langchain'],
];

/** The third-party packages the app brings itself, at the versions the workspace has (so the store has them). */
const PEERS = ['ai', '@langchain/core', 'zod'] as const;

const installedVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;

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

describe('the AI SDK provider and the LangChain model installed from their tarballs', () => {
  // Outside the repository, so nothing resolves through the workspace's node_modules.
  const project = mkdtempSync(join(tmpdir(), 'trtllm-install-'));
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  beforeAll(() => {
    const tarballs = join(project, 'tarballs');
    mkdirSync(tarballs);
    const packed: Record<string, string> = {};
    for (const [dir, name] of PACKAGES) {
      const pkgDir = join(root, 'packages', dir);
      // `pnpm test` builds first; packing without a build would test stale or missing files.
      if (!existsSync(join(pkgDir, 'dist', 'index.cjs'))) {
        throw new Error(`${name} is not built (packages/${dir}/dist): run pnpm build first`);
      }
      // pnpm pack rewrites workspace:^ ranges to the packed versions.
      const out = execFileSync('pnpm', ['pack', '--pack-destination', tarballs], {
        cwd: pkgDir,
        encoding: 'utf8',
      });
      packed[name] = `file:${out.trim().split('\n').at(-1)!}`;
    }
    const app = {
      name: 'trtllm-install-check',
      version: '0.0.0',
      private: true,
      dependencies: {
        ...packed,
        ...Object.fromEntries(PEERS.map((name) => [name, installedVersion(name)])),
      },
      // The packed packages depend on each other by version; the tarballs must answer those too.
      pnpm: { overrides: packed },
    };
    writeFileSync(join(project, 'package.json'), JSON.stringify(app, null, 2));
    writeFileSync(join(project, 'esm.mjs'), ESM_SCRIPT);
    writeFileSync(join(project, 'cjs.cjs'), CJS_SCRIPT);
    // The machine's pnpm store already holds every third-party package: no network when it is warm.
    execFileSync(
      'pnpm',
      ['install', '--prefer-offline', '--no-frozen-lockfile', '--ignore-scripts', '--reporter=append-only'],
      {
        cwd: project,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, CI: 'true' },
      },
    );
  }, 300_000);

  const run = (script: string): { aiSdk: string; finish: string; langchain: string } => {
    const out = execFileSync(process.execPath, [script], { cwd: project, encoding: 'utf8', timeout: 60_000 });
    return JSON.parse(out.trim().split('\n').at(-1)!) as { aiSdk: string; finish: string; langchain: string };
  };

  it('installs the workspace packages from tarballs, not from links into the repository', () => {
    for (const [, name] of PACKAGES) {
      const manifest = join(project, 'node_modules', name, 'package.json');
      expect(existsSync(manifest)).toBe(true);
      expect(existsSync(join(project, 'node_modules', name, 'src'))).toBe(false);
    }
  });

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
});
