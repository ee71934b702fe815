import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The workspace packages of the three front ends that read tool calls, by folder and name. */
const PACKAGES: readonly (readonly [string, string])[] = [
  ['core', '@trtllm/sdk'],
  ['grpc', '@trtllm/grpc'],
  ['http', '@trtllm/http'],
  ['connect', '@trtllm/connect'],
  ['tokenizers', '@trtllm/tokenizers'],
  ['testing', '@trtllm/testing'],
  ['ai-sdk', '@trtllm/ai-sdk'],
  ['langchain', '@trtllm/langchain'],
  ['openai', '@trtllm/openai'],
];

/** What an agent app brings itself, at the versions the workspace tests. */
const THIRD_PARTY = ['ai', '@langchain/core', 'langchain', 'openai', 'zod'] as const;

// Asynchronous, so the test worker stays responsive while pnpm, npm and the apps run.
const exec = promisify(execFile);

const installedVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;

/**
 * One model text (two parallel Hermes calls with non-ASCII arguments) through the three front ends:
 * the AI SDK's generateText loop over gRPC, LangChain's createAgent over HTTP, and trtllm-openai with
 * the official openai client (over HTTP). Each runs its tool and prints the calls it made and its final answer.
 * `load` is how the app loads a package (import or require).
 */
const agentApp = (load: (name: string) => string): string => `
const { createTriton } = ${load('@trtllm/ai-sdk')};
const { ChatTriton } = ${load('@trtllm/langchain')};
const { createOpenAiServer, transportFromUrl } = ${load('@trtllm/openai')};
const { fakeScript, startFakeTriton } = ${load('@trtllm/testing')};
const { generateText, isStepCount, tool } = ${load('ai')};
const { createAgent, tool: lcTool } = ${load('langchain')};
const { OpenAI } = ${load('openai')};
const { z } = ${load('zod')};

const MODEL = 'tensorrt_llm_bls';
const call = (city) => '<tool_call>\\n' + JSON.stringify({ name: 'get_weather', arguments: { city } }) + '\\n</tool_call>';
const SCRIPT = call('Zürich') + '\\n' + call('東京');
const weather = (seen, from) => async ({ city }) => {
  seen.push(city);
  return '21 C ' + fakeScript('answer from ' + from);
};

async function main() {
  const fake = await startFakeTriton();
  const out = {};

  const triton = createTriton({ grpcUrl: fake.grpcUrl });
  const aiSeen = [];
  const ai = await generateText({
    model: triton(MODEL),
    prompt: 'Weather? ' + fakeScript(SCRIPT),
    tools: { get_weather: tool({ description: 'Weather', inputSchema: z.object({ city: z.string() }), execute: weather(aiSeen, 'ai') }) },
    stopWhen: isStepCount(3),
  });
  out.aiSdk = { calls: aiSeen, answer: ai.text, finish: ai.steps[0].finishReason };

  const chat = new ChatTriton({ httpUrl: fake.httpUrl, model: MODEL, maxTokens: 256 });
  const lcSeen = [];
  const agent = createAgent({
    model: chat,
    tools: [lcTool(weather(lcSeen, 'langchain'), { name: 'get_weather', description: 'Weather', schema: z.object({ city: z.string() }) })],
  });
  const lc = await agent.invoke({ messages: [{ role: 'user', content: 'Weather? ' + fakeScript(SCRIPT) }] });
  out.langchain = { calls: lcSeen, answer: lc.messages.at(-1).content, finish: lc.messages[1].tool_calls.length > 0 ? 'tool-calls' : 'stop' };

  const transport = transportFromUrl(fake.httpUrl);
  const api = createOpenAiServer({ transport, model: MODEL });
  const client = new OpenAI({ baseURL: await api.listen(0, '127.0.0.1'), apiKey: 'unused', maxRetries: 0 });
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const messages = [{ role: 'user', content: 'Weather? ' + fakeScript(SCRIPT) }];
  const first = (await client.chat.completions.create({ model: MODEL, messages, tools })).choices[0];
  const oaSeen = [];
  messages.push(first.message);
  for (const c of first.message.tool_calls) {
    const result = await weather(oaSeen, 'openai')(JSON.parse(c.function.arguments));
    messages.push({ role: 'tool', tool_call_id: c.id, content: result });
  }
  const second = await client.chat.completions.create({ model: MODEL, messages, tools });
  out.openai = { calls: oaSeen, answer: second.choices[0].message.content, finish: first.finish_reason === 'tool_calls' ? 'tool-calls' : 'stop' };

  console.log(JSON.stringify(out));
  await api.close();
  await transport.close();
  await chat.close();
  await triton.close();
  await fake.close();
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

describe('agents on the three front ends, installed from their tarballs', () => {
  // Outside the repository, so nothing resolves through the workspace's node_modules.
  const project = mkdtempSync(join(tmpdir(), 'trtllm-agents-'));
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  beforeAll(async () => {
    const tarballs = join(project, 'tarballs');
    mkdirSync(tarballs);
    const packed: Record<string, string> = {};
    for (const [dir, name] of PACKAGES) {
      const pkgDir = join(root, 'packages', dir);
      if (!existsSync(join(pkgDir, 'dist', 'index.cjs'))) {
        throw new Error(`${name} is not built (packages/${dir}/dist): run pnpm build first`);
      }
      // pnpm pack rewrites workspace:^ ranges to the packed versions.
      const { stdout: out } = await exec('pnpm', ['pack', '--pack-destination', tarballs], {
        cwd: pkgDir,
        encoding: 'utf8',
      });
      packed[name] = `file:${out.trim().split('\n').at(-1)!}`;
    }
    const app = {
      name: 'trtllm-agents-check',
      version: '0.0.0',
      private: true,
      dependencies: { ...packed, ...Object.fromEntries(THIRD_PARTY.map((n) => [n, installedVersion(n)])) },
      // The packed packages depend on each other by version; the tarballs must answer those too.
      overrides: packed,
    };
    writeFileSync(join(project, 'package.json'), JSON.stringify(app, null, 2));
    writeFileSync(
      join(project, 'agents.mjs'),
      agentApp((name) => `await import('${name}')`),
    );
    writeFileSync(
      join(project, 'agents.cjs'),
      agentApp((name) => `require('${name}')`),
    );
    await exec(
      'npm',
      ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline', '--loglevel=error'],
      { cwd: project, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
  }, 300_000);

  const run = async (
    script: string,
  ): Promise<Record<string, { calls: string[]; answer: string; finish: string }>> => {
    const { stdout: out } = await exec(process.execPath, [script], {
      cwd: project,
      encoding: 'utf8',
      timeout: 90_000,
    });
    return JSON.parse(out.trim().split('\n').at(-1)!) as Record<
      string,
      { calls: string[]; answer: string; finish: string }
    >;
  };

  it.each(['agents.mjs', 'agents.cjs'])(
    '%s: the same two calls run on every front end, each then answers from the tool results',
    async (script) => {
      const out = await run(script);
      for (const [front, from] of [
        ['aiSdk', 'ai'],
        ['langchain', 'langchain'],
        ['openai', 'openai'],
      ] as const) {
        expect(out[front]).toEqual({
          calls: ['Zürich', '東京'],
          answer: `answer from ${from}`,
          finish: 'tool-calls',
        });
      }
    },
    120_000,
  );
});
