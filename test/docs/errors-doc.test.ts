/**
 * docs/ERRORS.md quotes the messages a newcomer meets. Each quote is marked
 * `<!-- error:NAME -->`QUOTE`` and checked here against the message the SDK prints when the error
 * is produced for real: against the fake Triton (over each transport the quote is about), by the
 * public API given the bad input, or by trtllm-openai run as a process. The doc is the expectation:
 * this file only knows how to cause each error, never what it says, so a message that changes
 * fails here naming the doc line to update.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTriton } from '@trtllm/ai-sdk';
import { transportFromUrl } from '@trtllm/connect';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { ChatTriton } from '@trtllm/langchain';
import { createOpenAiServer } from '@trtllm/openai';
import { type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { generateText, streamText } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../packages/openai/test/cli-process.js';
import { closedPort } from '../reliability/support/processes.js';
import { type Protocol, useFakeTriton } from '../support/fake.js';
import { type ErrorMark, errorMarks, quoteMatches, quotePattern, type RowFacts } from './error-marks.js';

const DOC = 'docs/ERRORS.md';
const marks = errorMarks(DOC);

const fake = useFakeTriton();
const closers: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  await Promise.all(closers.map((c) => c.close()));
});
function own<T extends { close(): Promise<void> }>(closer: T): T {
  closers.push(closer);
  return closer;
}

/**
 * What a produced error shows its user: the message, and what the doc's table row says of it
 * beside the quote: the `kind` (a `TritonLlmError`'s code, an OpenAI answer's type), the HTTP
 * status of an answer, and named fields (`endpointProtocol`, `param`, ...).
 */
interface Printed {
  readonly message: string;
  readonly kind?: string;
  readonly status?: number;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** What was printed, by where it was produced (`grpc`, `http`, `cli`, ...). */
type Messages = Record<string, Printed>;

function printedOf(err: unknown): Printed {
  expect(err).toBeInstanceOf(Error);
  if (!(err instanceof TritonLlmError)) return { message: (err as Error).message, fields: {} };
  return {
    message: err.message,
    kind: err.code,
    fields: { endpointProtocol: err.endpointProtocol, field: err.field },
  };
}

/** What the error `call` fails with shows; the test fails if it succeeds. */
async function messageOf(call: Promise<unknown> | (() => unknown)): Promise<Printed> {
  try {
    await (typeof call === 'function' ? call() : call);
  } catch (err) {
    return printedOf(err);
  }
  throw new Error('expected the call to fail');
}

/**
 * The doc quotes Triton's default ports (gRPC 8001, HTTP 8000), where the test had to use the fake's
 * or a free one: the text is read with each port of the test written as the doc's.
 */
function docPortsIn(text: string, ports: Record<number, number>): string {
  return Object.entries(ports).reduce(
    (t, [port, docPort]) => t.replace(new RegExp(`:${port}(?!\\d)`, 'g'), `:${docPort}`),
    text,
  );
}

function atDocPorts(printed: Printed, ports: Record<number, number>): Printed {
  return { ...printed, message: docPortsIn(printed.message, ports) };
}

const grpcPort = () => fake.triton().grpcPort;
const httpPort = () => fake.triton().httpPort;
const docPorts = (): Record<number, number> => ({ [grpcPort()]: 8001, [httpPort()]: 8000 });

/** A client of the fake over `protocol`, with the SDK's defaults but the model. */
function llmOver(protocol: Protocol, model: string): TritonLlm {
  return new TritonLlm({ transport: fake.transport(protocol), model });
}

/** The same failing call over both transports. */
async function overBoth(call: (protocol: Protocol) => Promise<unknown>): Promise<Messages> {
  return {
    grpc: atDocPorts(await messageOf(call('grpc')), docPorts()),
    http: atDocPorts(await messageOf(call('http')), docPorts()),
  };
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream);
}

/**
 * A client that reaches no server, over `protocol`. A refused connection is retried until the retry
 * budget is spent (10 s by default): a budget of 1 s gives the same message sooner.
 */
async function refusedOver(protocol: Protocol): Promise<Printed> {
  const port = await closedPort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const transport: Transport = own(
    protocol === 'grpc' ? grpcTransport({ baseUrl }) : httpTransport({ baseUrl }),
  );
  const llm = new TritonLlm({ transport, model: 'ensemble', retry: { budgetMs: 1000 } });
  const message = await messageOf(llm.generate({ prompt: 'What is ML?', maxTokens: 32 }));
  return atDocPorts(message, { [port]: protocol === 'grpc' ? 8001 : 8000 });
}

/** A client whose host name does not resolve. */
async function unresolvedOver(protocol: Protocol): Promise<Printed> {
  const baseUrl = 'http://triton:8001';
  const transport: Transport = own(
    protocol === 'grpc' ? grpcTransport({ baseUrl }) : httpTransport({ baseUrl }),
  );
  const llm = new TritonLlm({ transport, model: 'ensemble', retry: { attempts: 1 } });
  return messageOf(llm.generate({ prompt: 'Hi', maxTokens: 2 }));
}

/** The first token the fake generates for `prompt`: as `endId`, the generation is empty. */
const firstToken = (prompt: string): number =>
  generateTokens(fakeTokenizer.encode(prompt), { maxTokens: 1 })[0]!.tokens[0]!;

/** A call under a fault of the fake, which is cleared after it. */
async function withFaults<T>(
  faults: Parameters<ReturnType<typeof fake.triton>['setFaults']>[0],
  run: () => Promise<T>,
) {
  fake.triton().setFaults(faults);
  try {
    return await run();
  } finally {
    fake.triton().setFaults(undefined);
  }
}

const quiet = {
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
  error: () => undefined,
};

/** The AI SDK provider over `protocol`, at `url` (the fake's own endpoint for that protocol by default). */
function provider(protocol: Protocol, url?: string) {
  const at = url ?? (protocol === 'grpc' ? fake.triton().grpcUrl : fake.triton().httpUrl);
  return own(createTriton(protocol === 'grpc' ? { grpcUrl: at } : { httpUrl: at }));
}

/** The error streamText reports through onError. */
async function streamTextError(options: Parameters<typeof streamText>[0]): Promise<Printed> {
  const errors: unknown[] = [];
  const result = streamText({ ...options, onError: ({ error }) => void errors.push(error) });
  for await (const _ of result.textStream);
  expect(errors).toHaveLength(1);
  return printedOf(errors[0]);
}

/** An error of `call`, read as the same error of `as` (the doc quotes one and says the other is the same). */
function sameAs(call: string, as: string, printed: Printed): Printed {
  expect(printed.message.startsWith(`${call} `), printed.message).toBe(true);
  return { ...printed, message: `${as}${printed.message.slice(call.length)}` };
}

function chat(protocol: Protocol, model: string): ChatTriton {
  const url = protocol === 'grpc' ? { grpcUrl: fake.triton().grpcUrl } : { httpUrl: fake.triton().httpUrl };
  return own(new ChatTriton({ ...url, model }));
}

// ---- trtllm-openai, as a process --------------------------------------------------------------

/** trtllm-openai as a process (`runCli`): its stderr and exit code. */
async function cliRefusal(args: readonly string[]): Promise<{ stderr: string; code: number | null }> {
  const child = runCli(['--port', '0', ...args]);
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (d) => {
    stderr += String(d);
  });
  child.stdout!.on('data', (d) => {
    stdout += String(d);
    // A CLI that serves instead of refusing is stopped; the test then fails on its exit code.
    if (/serving/.test(stdout)) child.kill('SIGKILL');
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { stderr, code };
}

/** The CLI's lines, each checked by its own mark: the refusal ends the process with status 1. */
async function cliLines(args: readonly string[], ports: Record<number, number>): Promise<string[]> {
  const { stderr, code } = await cliRefusal(args);
  expect(code, stderr).toBe(1);
  return docPortsIn(stderr, ports)
    .split('\n')
    .filter((l) => l.startsWith('trtllm-openai: '));
}

/** The one line of the CLI's output that the quote is about (the quote names it: the error's own words). */
function lineLike(lines: readonly string[], quoted: string): Printed {
  return { message: lines.find((l) => quoteMatches(quoted, l)) ?? lines.join('\n'), fields: {} };
}

let unreachable: Promise<string[]> | undefined;

/** One trtllm-openai run at a port nothing listens on, with `--triton-wait 2`: its first and last lines are quoted. */
function unreachableCli(): Promise<string[]> {
  unreachable ??= closedPort().then((port) =>
    cliLines(['--triton', `grpc://localhost:${port}`, '--triton-wait', '2'], { [port]: 8001 }),
  );
  return unreachable;
}

// ---- trtllm-openai, as a library --------------------------------------------------------------

/** The JSON error of trtllm-openai's answer to a chat completion request. */
async function openAiError(
  server: { transport: Transport; model: string } | { llm: TritonLlm },
  body: Record<string, unknown>,
): Promise<Printed> {
  const app = createOpenAiServer({ ...server, logger: quiet });
  closers.push({ close: () => app.close() });
  const baseUrl = await app.listen(0);
  const response = await fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'model' in server ? server.model : undefined,
      messages: [{ role: 'user', content: 'Hi' }],
      ...body,
    }),
  });
  expect(response.ok).toBe(false);
  const { error } = (await response.json()) as {
    error: { message: string; type: string; param: unknown; code: unknown };
  };
  return {
    message: error.message,
    kind: error.type,
    status: response.status,
    fields: { param: error.param, code: error.code },
  };
}

/** trtllm-openai in front of a Triton that is not there. */
async function openAiUnavailable(): Promise<Messages> {
  const port = await closedPort();
  const transport = own(transportFromUrl(`grpc://127.0.0.1:${port}`));
  // A retry budget of 1 s instead of 10: the same message, sooner (see refusedOver).
  const llm = new TritonLlm({ transport, model: 'ensemble', retry: { budgetMs: 1000 } });
  return { grpc: atDocPorts(await openAiError({ llm }, { model: 'ensemble' }), { [port]: 8001 }) };
}

/** The model fails on the server before its first token (not retried: the model said no). */
const MODEL_FAILS = { model: 'ensemble', errorAfterTokens: 0 } as const;

/**
 * How to cause each quoted error, by the name of its mark. A case returns what was printed,
 * by where: a mark's quote must match every message of its case.
 */
const CASES: Record<string, (quoted: string) => Promise<Messages>> = {
  // Each front end's lead, on a model that fails on the server before its first token
  'lead.generate': () =>
    withFaults(MODEL_FAILS, () =>
      overBoth((p) => llmOver(p, 'ensemble').generate({ prompt: 'Hi', maxTokens: 4 })),
    ),
  'lead.stream': () =>
    withFaults(MODEL_FAILS, () =>
      overBoth((p) => drain(llmOver(p, 'ensemble').stream({ prompt: 'Hi', maxTokens: 4 }))),
    ),
  'lead.generateText': () =>
    withFaults(MODEL_FAILS, async () => ({
      grpc: await messageOf(generateText({ model: provider('grpc')('ensemble'), prompt: 'Hi' })),
      http: await messageOf(generateText({ model: provider('http')('ensemble'), prompt: 'Hi' })),
    })),
  'lead.streamText': () =>
    withFaults(MODEL_FAILS, async () => ({
      grpc: await streamTextError({ model: provider('grpc')('ensemble'), prompt: 'Hi' }),
      http: await streamTextError({ model: provider('http')('ensemble'), prompt: 'Hi' }),
    })),
  'lead.invoke': () =>
    withFaults(MODEL_FAILS, async () => ({
      grpc: await messageOf(chat('grpc', 'ensemble').invoke('Hi')),
      http: await messageOf(chat('http', 'ensemble').invoke('Hi')),
    })),
  'lead.chat-stream': () =>
    withFaults(MODEL_FAILS, async () => ({
      grpc: await messageOf(async () => drain(await chat('grpc', 'ensemble').stream('Hi'))),
      http: await messageOf(async () => drain(await chat('http', 'ensemble').stream('Hi'))),
    })),
  'lead.openai.answered': () =>
    withFaults(MODEL_FAILS, async () => ({
      grpc: await openAiError({ transport: fake.transport('grpc'), model: 'ensemble' }, {}),
      http: await openAiError({ transport: fake.transport('http'), model: 'ensemble' }, {}),
    })),
  'lead.openai.unavailable': () => openAiUnavailable(),

  // Connecting
  'connect.refused.grpc': async () => ({ grpc: await refusedOver('grpc') }),
  'connect.refused.http': async () => ({ http: await refusedOver('http') }),
  'connect.unresolved.grpc': async () => ({ grpc: await unresolvedOver('grpc') }),
  'connect.unresolved.http': async () => ({ http: await unresolvedOver('http') }),
  'connect.grpc-at-http-port': async () => {
    const transport = own(grpcTransport({ baseUrl: `http://localhost:${httpPort()}` }));
    const llm = new TritonLlm({ transport, model: 'ensemble' });
    return { grpc: atDocPorts(await messageOf(llm.generate({ prompt: 'Hi', maxTokens: 2 })), docPorts()) };
  },
  'connect.http-at-grpc-port': async () => {
    const transport = own(httpTransport({ baseUrl: `http://localhost:${grpcPort()}` }));
    const llm = new TritonLlm({ transport, model: 'ensemble' });
    return { http: atDocPorts(await messageOf(llm.generate({ prompt: 'Hi', maxTokens: 2 })), docPorts()) };
  },
  'option.baseURL': async () => ({
    grpc: await messageOf(() => grpcTransport({ baseURL: 'http://localhost:8001' } as never)),
    http: await messageOf(() => httpTransport({ baseURL: 'http://localhost:8001' } as never)),
  }),
  'option.modle': async () => ({
    sdk: await messageOf(
      () => new TritonLlm({ transport: fake.transport('grpc'), modle: 'ensemble' } as never),
    ),
  }),
  'option.tls': async () => ({
    grpc: await messageOf(() =>
      grpcTransport({ baseUrl: 'https://localhost:8001', tls: { rejectUnauthorised: false } } as never),
    ),
  }),
  'grpc.path': async () => ({
    grpc: await messageOf(() => grpcTransport({ baseUrl: 'grpc://localhost:8001/v2' })),
  }),
  'url.scheme': async () => ({ connect: await messageOf(() => transportFromUrl('ftp://localhost:8001')) }),

  // The model
  'model.not-found.grpc': async () => ({
    grpc: await messageOf(llmOver('grpc', 'ensembel').generate({ prompt: 'Hi', maxTokens: 2 })),
  }),
  'model.not-found.http': async () => ({
    http: await messageOf(llmOver('http', 'ensembel').generate({ prompt: 'Hi', maxTokens: 2 })),
  }),
  'model.not-decoupled': () =>
    overBoth((p) => drain(llmOver(p, 'ensemble_unary').stream({ prompt: 'Hi', maxTokens: 2 }))),
  'model.raw-prompt': () =>
    overBoth((p) => llmOver(p, 'tensorrt_llm').generate({ prompt: 'Hi', maxTokens: 2 })),
  // The doc quotes generateText / invoke and says streamText / stream print "the same": each is
  // read with its call named as the quoted one.
  'ai-sdk.raw-model': async () => ({
    generateText: await messageOf(generateText({ model: provider('grpc')('tensorrt_llm'), prompt: 'Hi' })),
    streamText: sameAs(
      'streamText',
      'generateText',
      await streamTextError({ model: provider('http')('tensorrt_llm'), prompt: 'Hi' }),
    ),
  }),
  'langchain.raw-model': async () => ({
    invoke: await messageOf(chat('grpc', 'tensorrt_llm').invoke('Hi')),
    stream: sameAs(
      'ChatTriton.stream',
      'ChatTriton.invoke',
      await messageOf(async () => drain(await chat('http', 'tensorrt_llm').stream('Hi'))),
    ),
  }),
  'model.word-ids-over-http': async () => ({
    http: await messageOf(
      llmOver('http', 'tensorrt_llm').generate({ inputIds: [1, 2, 3], maxTokens: 2, badWordIds: [[5]] }),
    ),
  }),
  'model.unsupported-option': () =>
    overBoth((p) => llmOver(p, 'llmapi').generate({ prompt: 'Hi', maxTokens: 2, returnContextLogits: true })),
  'model.failed-before-first-response.grpc': async () => ({
    grpc: await messageOf(
      drain(
        llmOver('grpc', 'tensorrt_llm_bls_official').stream({
          prompt: 'Hello',
          maxTokens: 5,
          endId: firstToken('Hello'),
        }),
      ),
    ),
  }),
  'model.failed-before-first-response.http': async () => ({
    http: await messageOf(
      drain(
        llmOver('http', 'tensorrt_llm_bls_official').stream({
          prompt: 'Hello',
          maxTokens: 5,
          endId: firstToken('Hello'),
        }),
      ),
    ),
  }),

  // The request
  'request.empty-prompt': () =>
    overBoth((p) => llmOver(p, 'ensemble').generate({ prompt: '', maxTokens: 2 })),
  'request.max-tokens': () =>
    overBoth((p) => llmOver(p, 'ensemble').generate({ prompt: 'Hi', maxTokens: 0 })),
  'request.temperature': () =>
    overBoth((p) => llmOver(p, 'ensemble').generate({ prompt: 'Hi', maxTokens: 2, temperature: -1 })),
  'request.unknown-option': () =>
    overBoth((p) => llmOver(p, 'ensemble').generate({ prompt: 'Hi', maxToken: 4 } as never)),
  'request.unknown-call-option': () =>
    overBoth((p) =>
      llmOver(p, 'ensemble').generate({ prompt: 'Hi', maxTokens: 2 }, { timeoutMS: 5 } as never),
    ),

  // Time
  'time.deadline.grpc': () =>
    withFaults({ model: 'ensemble', stallAfterTokens: 1 }, async () => ({
      grpc: await messageOf(
        llmOver('grpc', 'ensemble').generate({ prompt: 'Hi', maxTokens: 8 }, { timeoutMs: 300 }),
      ),
    })),
  'time.deadline.http': () =>
    withFaults({ model: 'ensemble', stallAfterTokens: 1 }, async () => ({
      http: await messageOf(
        llmOver('http', 'ensemble').generate({ prompt: 'Hi', maxTokens: 8 }, { timeoutMs: 300 }),
      ),
    })),
  'time.idle': () =>
    withFaults({ model: 'ensemble', stallAfterTokens: 1 }, () =>
      overBoth((p) =>
        drain(llmOver(p, 'ensemble').stream({ prompt: 'Hi', maxTokens: 8 }, { idleTimeoutMs: 100 })),
      ),
    ),

  // The AI SDK and LangChain
  'ai-sdk.not-found.grpc': async () => ({
    grpc: await messageOf(generateText({ model: provider('grpc')('ensembel'), prompt: 'Hi' })),
  }),
  'ai-sdk.not-found.http': async () => ({
    http: await messageOf(generateText({ model: provider('http')('ensembel'), prompt: 'Hi' })),
  }),
  'langchain.not-found': async () => ({
    grpc: await messageOf(chat('grpc', 'ensembel').invoke('Hi')),
    http: await messageOf(chat('http', 'ensembel').invoke('Hi')),
  }),
  'ai-sdk.grpc-at-http-port': async () => {
    const triton = provider('grpc', `http://localhost:${httpPort()}`);
    return {
      grpc: atDocPorts(
        await messageOf(generateText({ model: triton('ensemble'), prompt: 'Hi' })),
        docPorts(),
      ),
    };
  },
  'ai-sdk.http-at-grpc-port': async () => {
    const triton = provider('http', `http://localhost:${grpcPort()}`);
    return {
      http: atDocPorts(
        await messageOf(generateText({ model: triton('ensemble'), prompt: 'Hi' })),
        docPorts(),
      ),
    };
  },
  'ai-sdk.option': async () => ({
    createTriton: await messageOf(() => createTriton({ grpcURL: 'http://localhost:8001' } as never)),
  }),
  'langchain.option': async () => ({
    ChatTriton: await messageOf(
      () => new ChatTriton({ grpcUrl: 'http://localhost:8001', modle: 'ensemble' } as never),
    ),
  }),
  'ai-sdk.not-decoupled': async () => ({
    grpc: await streamTextError({ model: provider('grpc')('ensemble_unary'), prompt: 'Hi' }),
    http: await streamTextError({ model: provider('http')('ensemble_unary'), prompt: 'Hi' }),
  }),

  // trtllm-openai at start
  'openai.cli.model': async (quoted) => ({
    cli: lineLike(
      await cliLines(['--triton', `grpc://localhost:${grpcPort()}`, '--model', 'ensembel'], docPorts()),
      quoted,
    ),
  }),
  'openai.cli.unreachable.attempt': async (quoted) => ({
    cli: lineLike((await unreachableCli()).slice(0, 1), quoted),
  }),
  'openai.cli.unreachable.gave-up': async (quoted) => ({
    cli: lineLike((await unreachableCli()).slice(-1), quoted),
  }),
  'openai.cli.wrong-port': async (quoted) => ({
    cli: lineLike(await cliLines(['--triton', `grpc://localhost:${httpPort()}`], docPorts()), quoted),
  }),
  'openai.cli.wrong-port-reverse': async (quoted) => ({
    cli: lineLike(await cliLines(['--triton', `http://localhost:${grpcPort()}`], docPorts()), quoted),
  }),
  'openai.cli.scheme': async (quoted) => ({
    cli: lineLike(await cliLines(['--triton', 'ftp://localhost:8001'], {}), quoted),
  }),
  'openai.cli.tokenizer-dir': async (quoted) => ({
    cli: lineLike(
      await cliLines(
        ['--triton', `grpc://localhost:${grpcPort()}`, '--tokenizer-dir', '/models/tok'],
        docPorts(),
      ),
      quoted,
    ),
  }),
  'openai.cli.raw-model': async (quoted) => ({
    cli: lineLike(
      await cliLines(['--triton', `grpc://localhost:${grpcPort()}`, '--model', 'tensorrt_llm'], docPorts()),
      quoted,
    ),
  }),
  'openai.cli.template-only': async (quoted) => {
    const dir = await mkdtemp(join(tmpdir(), 'errors-doc-'));
    try {
      await writeFile(
        join(dir, 'tokenizer_config.json'),
        JSON.stringify({ chat_template: '{{ messages }}' }),
      );
      const args = [
        '--triton',
        `grpc://localhost:${grpcPort()}`,
        '--model',
        'tensorrt_llm',
        '--tokenizer-dir',
        dir,
      ];
      return { cli: lineLike(await cliLines(args, docPorts()), quoted) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },

  // trtllm-openai's answers
  'openai.unknown-field': async () => ({
    grpc: await openAiError({ transport: fake.transport('grpc'), model: 'ensemble' }, { max_token: 5 }),
  }),
  'openai.unsupported-field': async () => ({
    grpc: await openAiError(
      { transport: fake.transport('grpc'), model: 'ensemble' },
      { logit_bias: { '1': 2 } },
    ),
  }),
  'openai.unknown-model': async () => ({
    grpc: await openAiError({ transport: fake.transport('grpc'), model: 'ensemble' }, { model: 'gpt-4' }),
  }),
  'openai.raw-model': async () => ({
    grpc: await openAiError({ transport: fake.transport('grpc'), model: 'tensorrt_llm' }, {}),
  }),
  'openai.unavailable': () => openAiUnavailable(),
};

/** What the error shows against what the first cell of the doc's table row says of it. */
function wrongFacts(printed: Printed, row: RowFacts | undefined): string[] {
  if (row === undefined) return [];
  const wrong: string[] = [];
  if (row.kind !== undefined && printed.kind !== row.kind)
    wrong.push(`the code (or type) is ${printed.kind}, the doc says ${row.kind}`);
  if (row.status !== undefined && printed.status !== row.status)
    wrong.push(`the status is ${printed.status}, the doc says ${row.status}`);
  for (const [name, value] of Object.entries(row.fields)) {
    if (String(printed.fields[name]) !== value)
      wrong.push(`${name} is ${String(printed.fields[name])}, the doc says ${value}`);
  }
  return wrong;
}

/** Where a mark is, for a failure message. */
const at = (mark: ErrorMark): string => `${mark.file}:${mark.line} (error:${mark.name})`;

describe(`the errors quoted in ${DOC}`, () => {
  it('are marked, each with a name this test knows how to cause', () => {
    expect(marks.length).toBeGreaterThan(0);
    expect(marks.filter((m) => !(m.name in CASES)).map(at)).toEqual([]);
  });

  it('each case this test knows is quoted in the doc', () => {
    const quoted = new Set(marks.map((m) => m.name));
    expect(Object.keys(CASES).filter((name) => !quoted.has(name))).toEqual([]);
  });

  it.each(marks.filter((m) => m.name in CASES).map((m) => [at(m), m] as const))(
    '%s is what the SDK prints',
    async (_, mark) => {
      const printed = await CASES[mark.name]!(mark.quoted);
      const wrong = Object.entries(printed).flatMap(([by, p]) => {
        const problems = [
          ...(quoteMatches(mark.quoted, p.message) ? [] : [`prints ${p.message}`]),
          ...wrongFacts(p, mark.row),
        ];
        return problems.map((problem) => `  (${by}) ${problem}`);
      });
      if (wrong.length > 0) {
        throw new Error(
          `${at(mark)} quotes\n  ${mark.quoted}\nbut the SDK\n${wrong.join('\n')}\n` +
            'update the doc (… or ... stand for any text, <words> for a value), or fix the code if the doc is right',
        );
      }
    },
    60_000,
  );

  it('read a quote the way a reader does: gaps are any text, the rest is exact', () => {
    expect(quoteMatches('a ... c', 'a b c')).toBe(true);
    expect(quoteMatches('after … attempts', 'after 13 attempts')).toBe(true);
    expect(quoteMatches('--tokenizer-dir <dir> has', '--tokenizer-dir /tmp/x has')).toBe(true);
    expect(quoteMatches('...; give it as grpcUrl', 'x failed: y; give it as grpcUrl')).toBe(true);
    expect(quoteMatches('shape [1,2,1] (got "")', 'shape [1,2,1] (got "")')).toBe(true);
    // Whole messages: nothing more at either end unless the quote says so, and no character differs.
    expect(quoteMatches('did you mean x?', 'did you mean x? (got 1)')).toBe(false);
    expect(quoteMatches('did you mean x?', 'stream failed: did you mean x?')).toBe(false);
    expect(quoteMatches('(after 3 attempts)', '(after 13 attempts)')).toBe(false);
    expect(quotePattern('a.b').test('aXb')).toBe(false);
  });

  it('find marks with their quote and row, and refuse a mark without a quote', () => {
    const text = [
      "| `unavailable`, `endpointProtocol: 'http'` | gRPC: <!-- error:a -->`m1`; <!-- error:b -->`m2` | fix |",
      '| 400 `invalid_request_error`, `param: "max_token"` | <!-- error:c -->`m3` | fix |',
      '| <!-- error:d -->`m4` | fix |',
      'Marks look like `<!-- error:NAME -->` in prose.',
    ].join('\n');
    const found = errorMarks('x.md', text);
    expect(found.map((m) => [m.name, m.line, m.quoted])).toEqual([
      ['a', 1, 'm1'],
      ['b', 1, 'm2'],
      ['c', 2, 'm3'],
      ['d', 3, 'm4'],
    ]);
    expect(found[0]!.row).toEqual({ kind: 'unavailable', fields: { endpointProtocol: 'http' } });
    expect(found[2]!.row).toEqual({
      status: 400,
      kind: 'invalid_request_error',
      fields: { param: 'max_token' },
    });
    expect(found[3]!.row).toBeUndefined();
    expect(() => errorMarks('x.md', 'see <!-- error:e --> here')).toThrow(/x\.md:1: the mark error:e/);
  });
});
