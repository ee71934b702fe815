import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, servingUrl } from '../../packages/openai/test/cli-process.js';
import { type OwnTriton, startExplicitTriton } from './own-triton.js';
import { type Protocol, REAL_SKIPPED } from './servers.js';

// Issue 53 on the real Triton: trtllm-openai checks at start that every model it serves is ready.
// The fake's models are always ready, so this file starts a second real Triton under explicit model
// control (the suite's shared server keeps its models), which loads only tensorrt_llm_bls and the
// models it calls: the other models of the repository are listed but not loaded, one is made to fail its
// load (which also turns Triton's strict server readiness false), and one is loaded while the CLI waits.
const _ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A model's entries in Triton's repository index, as Triton gives them. */
async function indexEntry(
  triton: OwnTriton,
  model: string,
): Promise<{ name: string; state?: string; reason?: string } | undefined> {
  const r = await fetch(`${triton.http}/v2/repository/index`, { method: 'POST' });
  const index = (await r.json()) as { name: string; state?: string; reason?: string }[];
  return index.find((m) => m.name === model);
}

/** The CLI's stderr as it comes, and its exit. */
function started(args: readonly string[]): {
  child: ChildProcess;
  err: () => string;
  exit: Promise<unknown>;
} {
  const child = runCli(['--port', '0', ...args]);
  let err = '';
  child.stderr!.on('data', (d) => {
    err += String(d);
  });
  return { child, err: () => err, exit: once(child, 'exit').then(([code]) => code) };
}

/** Resolves once the CLI's stderr matches `pattern`; fails if it exits first. */
async function stderrLine(run: ReturnType<typeof started>, pattern: RegExp): Promise<string> {
  for (;;) {
    const line = run
      .err()
      .split('\n')
      .find((l) => pattern.test(l));
    if (line !== undefined) return line;
    const more = once(run.child.stderr!, 'data');
    const ended = run.exit.then(() => {
      throw new Error(`the CLI exited before ${pattern}: ${run.err()}`);
    });
    await Promise.race([more, ended]);
  }
}

const expected = (prompt: string, maxTokens: number): string =>
  fakeTokenizer.decode(generateTokens(fakeTokenizer.encode(prompt), { maxTokens })[0]!.tokens);

describe.skipIf(REAL_SKIPPED)('trtllm-openai at start, on a real Triton with explicit model control', () => {
  let triton: OwnTriton;
  const url = (protocol: Protocol) => (protocol === 'grpc' ? triton.grpc : triton.http);
  beforeAll(async () => {
    triton = await startExplicitTriton(
      // The BLS and the models it calls: Triton cannot know that a BLS model calls them.
      ['tensorrt_llm', 'preprocessing', 'postprocessing', 'tensorrt_llm_bls'],
    );
  });
  afterAll(() => triton?.stop());

  it.each(['grpc', 'http'] as const)(
    '(%s) a served model Triton lists but has not loaded is waited for, named with its state, then exits 1 serving none',
    async (protocol) => {
      expect(await indexEntry(triton, 'ensemble_unary')).toEqual({ name: 'ensemble_unary' });
      const run = started([
        '--triton',
        url(protocol),
        '--model',
        'tensorrt_llm_bls',
        '--model',
        'ensemble_unary',
        '--triton-wait',
        '1.5',
      ]);
      const out: string[] = [];
      run.child.stdout!.on('data', (d) => out.push(String(d)));
      expect(await run.exit).toBe(1);
      const lines = run.err().trim().split('\n');
      expect(lines[0]).toContain(
        `trtllm-openai: model 'ensemble_unary' on Triton at ${url(protocol)} is not ready (not loaded); attempt 1,`,
      );
      expect(lines.at(-1)).toMatch(
        /model 'ensemble_unary' .* is not ready \(not loaded\); gave up after \d+ attempts in 1\.5 s \(--triton-wait\)$/,
      );
      // Listed, so not "missing": the fix is on Triton, not a typo in --model.
      expect(run.err()).not.toContain('is not on Triton');
      expect(out.join('')).not.toContain('serving');
    },
  );

  it('a model that failed to load is waited for with Triton’s reason; a ready one is served though Triton is not ready', {
    timeout: 60_000,
  }, async () => {
    const load = await fetch(`${triton.http}/v2/repository/models/llmapi/load`, {
      method: 'POST',
      body: JSON.stringify({ parameters: { config: JSON.stringify({ backend: 'no_such_backend' }) } }),
    });
    expect(load.status).toBe(400);
    const entry = await indexEntry(triton, 'llmapi');
    expect(entry?.state).toBe('UNAVAILABLE');
    expect(entry?.reason).toContain('no_such_backend');
    // Strict readiness (Triton's default): one failed model and the server as a whole is not ready.
    expect((await fetch(`${triton.http}/v2/health/ready`)).status).not.toBe(200);

    const failed = started(['--triton', triton.http, '--model', 'llmapi', '--triton-wait', '1']);
    expect(await failed.exit).toBe(1);
    expect(failed.err()).toContain(
      `model 'llmapi' on Triton at ${triton.http} is not ready (UNAVAILABLE: ${entry?.reason}); attempt 1,`,
    );
    expect(failed.err()).toMatch(/gave up after \d+ attempts in 1 s \(--triton-wait\)\n$/);

    const ready = started(['--triton', triton.grpc, '--model', 'tensorrt_llm_bls', '--triton-wait', '1']);
    try {
      const baseURL = await servingUrl(ready.child);
      const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
      const r = await client.completions.create({
        model: 'tensorrt_llm_bls',
        prompt: 'Hello world',
        max_tokens: 5,
      });
      expect(r.choices[0]?.text).toBe(expected('Hello world', 5));
      expect(ready.err()).not.toContain('attempt');
    } finally {
      ready.child.kill('SIGKILL');
    }
  });

  it.each(['grpc', 'http'] as const)(
    '(%s) a ready BLS whose tensorrt_llm is not loaded is waited for, naming that model, then served once it loads',
    { timeout: 90_000 },
    async (protocol) => {
      // Triton keeps the BLS ready without the model it calls, and fails each of its requests.
      expect(
        (await fetch(`${triton.http}/v2/repository/models/tensorrt_llm/unload`, { method: 'POST' })).status,
      ).toBe(200);
      let run: ReturnType<typeof started> | undefined;
      try {
        // Triton answers the unload at once and unloads in the background (UNLOADING meanwhile).
        let entry = await indexEntry(triton, 'tensorrt_llm');
        while (entry?.state === 'READY' || entry?.state === 'UNLOADING') {
          await new Promise((resolve) => setTimeout(resolve, 50));
          entry = await indexEntry(triton, 'tensorrt_llm');
        }
        const state = entry?.reason ? `${entry.state}: ${entry.reason}` : entry?.state;
        expect(state).toMatch(/^UNAVAILABLE/);
        expect((await fetch(`${triton.http}/v2/models/tensorrt_llm_bls/ready`)).status).toBe(200);
        const direct = await fetch(`${triton.http}/v2/models/tensorrt_llm_bls/generate`, {
          method: 'POST',
          body: JSON.stringify({ text_input: 'Hello world', max_tokens: 5 }),
        });
        expect(await direct.text()).toContain("Model 'tensorrt_llm' is not ready");
        // The SDK tells it as it is: the server is not ready for that model (not an internal error).
        const transport =
          protocol === 'grpc'
            ? grpcTransport({ baseUrl: triton.grpc })
            : httpTransport({ baseUrl: triton.http });
        const llm = new TritonLlm({ transport, model: 'tensorrt_llm_bls', retry: { attempts: 1 } });
        try {
          const err = await llm.generate({ prompt: 'Hello world', maxTokens: 5 }).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(TritonLlmError);
          expect((err as TritonLlmError).code).toBe('unavailable');
          expect((err as TritonLlmError).retryable).toBe(true);
          expect((err as TritonLlmError).serverMessage).toContain("Model 'tensorrt_llm' is not ready");
        } finally {
          await llm.close();
        }

        run = started(['--triton', url(protocol), '--model', 'tensorrt_llm_bls', '--triton-wait', '60']);
        const serving = servingUrl(run.child);
        serving.catch(() => undefined);
        const line = await stderrLine(run, /attempt 1,/);
        expect(line).toContain(
          `model 'tensorrt_llm_bls' on Triton at ${url(protocol)} calls 'tensorrt_llm' (its config parameter tensorrt_llm_model_name), which is not ready (${state}); attempt 1,`,
        );
        expect(
          (await fetch(`${triton.http}/v2/repository/models/tensorrt_llm/load`, { method: 'POST' })).status,
        ).toBe(200);
        const client = new OpenAI({ baseURL: await serving, apiKey: 'unused', maxRetries: 0 });
        const r = await client.completions.create({
          model: 'tensorrt_llm_bls',
          prompt: 'Hello world',
          max_tokens: 5,
        });
        expect(r.choices[0]?.text).toBe(expected('Hello world', 5));
      } finally {
        run?.child.kill('SIGKILL');
        await fetch(`${triton.http}/v2/repository/models/tensorrt_llm/load`, { method: 'POST' });
      }
    },
  );

  it('a BLS whose config still holds the template’s placeholder for tensorrt_llm_model_name exits 1 at once, saying so', {
    timeout: 60_000,
  }, async () => {
    const original = (await (await fetch(`${triton.http}/v2/models/tensorrt_llm_bls/config`)).json()) as {
      parameters: Record<string, { string_value: string }>;
    };
    const load = (config: unknown) =>
      fetch(`${triton.http}/v2/repository/models/tensorrt_llm_bls/load`, {
        method: 'POST',
        body: JSON.stringify({ parameters: { config: JSON.stringify(config) } }),
      });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text of NVIDIA's unfilled config template
    const placeholder = '${tensorrt_llm_model_name}';
    const unfilled = {
      ...original,
      parameters: { ...original.parameters, tensorrt_llm_model_name: { string_value: placeholder } },
    };
    expect((await load(unfilled)).status).toBe(200);
    try {
      // Triton keeps it ready, and each request fails on the name.
      expect((await fetch(`${triton.http}/v2/models/tensorrt_llm_bls/ready`)).status).toBe(200);
      const direct = await fetch(`${triton.http}/v2/models/tensorrt_llm_bls/generate`, {
        method: 'POST',
        body: JSON.stringify({ text_input: 'Hello world', max_tokens: 5 }),
      });
      expect(await direct.text()).toContain(placeholder);
      const run = started(['--triton', triton.grpc, '--model', 'tensorrt_llm_bls', '--triton-wait', '60']);
      expect(await run.exit).toBe(1);
      const err = run.err();
      expect(err).toContain(
        `model 'tensorrt_llm_bls' on Triton at ${triton.grpc} calls '${placeholder}' (its config parameter tensorrt_llm_model_name), which is not on Triton at ${triton.grpc} (its models: `,
      );
      expect(err).toContain(
        "that is a placeholder of NVIDIA's config template: fill the BLS model's config.pbtxt (tools/fill_template.py)",
      );
      // Missing from the repository: no wait, a single line.
      expect(err).not.toContain('attempt');
    } finally {
      // A load without a config keeps the last override: the original goes back the same way.
      expect((await load(original)).status).toBe(200);
    }
  });

  it('a model loaded while the CLI waits is then served', { timeout: 90_000 }, async () => {
    const run = started(['--triton', triton.grpc, '--model', 'ensemble', '--triton-wait', '60']);
    try {
      const serving = servingUrl(run.child);
      serving.catch(() => undefined);
      await stderrLine(run, /model 'ensemble' .* is not ready \(not loaded\); attempt 1,/);
      const load = await fetch(`${triton.http}/v2/repository/models/ensemble/load`, { method: 'POST' });
      expect(load.status).toBe(200);
      const client = new OpenAI({ baseURL: await serving, apiKey: 'unused', maxRetries: 0 });
      const r = await client.completions.create({ model: 'ensemble', prompt: 'Hello world', max_tokens: 5 });
      expect(r.choices[0]?.text).toBe(expected('Hello world', 5));
    } finally {
      run.child.kill('SIGKILL');
    }
  });
});
