#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { parseTritonUrl, transportFromUrl } from '@trtllm/connect';
import { type Tokenizer, type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import {
  CHAT_TEMPLATE_CHOICES,
  type ChatTemplateChoice,
  loadTokenizerDir,
  TOOL_CALL_PARSERS,
  type ToolCallParserChoice,
} from '@trtllm/tokenizers';
import { waitForBackend } from './backend-check.js';
import {
  type CliAdapter,
  type CliModel,
  type CliModels,
  modelsFromConfig,
  modelsFromFlags,
  UsageError,
} from './cli-models.js';
import { loadLoraDir } from './lora-files.js';
import { cliTokenizerSetting } from './raw-model.js';
import { listServableModels } from './repository-models.js';
import type { LoraAdapterOptions, ServedModelOptions } from './served-models.js';
import { createServerWith, type ServerHooks } from './server.js';
import { isClusterWorker, runPrimary, workerHooks, workersFlag } from './workers.js';

const USAGE = `Usage: trtllm-openai [options]

An OpenAI-compatible API (/v1/models, /v1/completions, /v1/chat/completions) in front of Triton.

Options:
  --triton <url>           Triton address: grpc://host:port (grpcs:// for TLS, or dns:host:port),
                           or http(s)://host:port[/prefix] (default grpc://localhost:8001)
  --model <spec>           Triton model to serve (default ensemble), checked at start; repeat it to
                           serve several. <spec> is <triton-model>[,name=<served name>]
                           [,tokenizer-dir=<dir>][,chat-template=<t>]; --model all serves every
                           ready model of the repository that the SDK can drive
  --lora <spec>            A LoRA adapter served as a model name: <name>,base=<served model>
                           [,task-id=<n>][,lora-name=<s>][,path=<p>][,ckpt-source=hf|nemo][,dir=<d>]
                           (C++ model: task-id, and dir=, hf_lora_convert.py's output, to send its
                           weights with the first request; LLM API: task-id, lora-name and path, and
                           ckpt-source, the format at path; vLLM: lora-name); repeatable
  --config <file.json>     The models as JSON instead of --model/--lora:
                           {"models": [{"model", "name", "tokenizerDir", "chatTemplate",
                           "adapters": [{"name", "taskId", "loraName", "path", "ckptSource", "dir"}]}]} or
                           {"models": "all"}
  --triton-wait <seconds>  How long to wait at start for Triton to answer and the model to be
                           ready, trying again with a line per attempt (default 30)
  --served-model-name <n>  Model name clients use, with one --model (default: --model)
  --port <port>            Port to listen on (default 3000)
  --host <host>            Address to listen on (default 127.0.0.1)
  --api-key <key>          Require "Authorization: Bearer <key>" (or set TRTLLM_OPENAI_API_KEY)
  --chat-template <name>   auto | chatml | llama2 | llama3 (default auto: the model's own, else chatml);
                           the default of every model that sets none
  --tokenizer-dir <dir>    Hugging Face tokenizer directory: its chat template, and its tokenizer.json when
                           it has one (needed for the raw tensorrt_llm model; counts prompt tokens for older
                           ensembles); a path without either fails at start; the default of every model
  --default-max-tokens <n> max_tokens of chat requests that give none (default 1024)
  --tool-call-parser <p>   auto | hermes | llama3_json: how tool calls are read from the model's text
                           (default auto: the format the chat template teaches)
  --max-concurrency <n>    Most generation requests running at once (default: no limit)
  --max-queue <n>          Requests that may wait for a slot past --max-concurrency (default 0);
                           past both, 429 with Retry-After
  --retry-after <seconds>  Retry-After of those 429s (default 1)
  --drain-timeout <s>      On SIGTERM: stop accepting, /health 503, let requests in flight finish for
                           up to this long, then end them and exit 0 (default 30)
  --workers <n>            Processes sharing the port (node:cluster), 1 to 256 or auto (one per
                           usable core, within a container's CPU limit); default 1. --max-concurrency
                           and --max-queue hold per worker; /metrics answers every worker's sum;
                           SIGTERM drains them all
  -h, --help               Show this help

GET /metrics is Prometheus text; GET /health is 200 when every model is ready and not draining.
`;

/**
 * The transports' messages in the user's --triton terms: a gRPC transport names its endpoint by
 * the http(s):// origin it dials (`the server at http://host:8000`), which the user gave as
 * `grpc://host:8000` (issue 53), and its hints name SDK functions (`use httpTransport for HTTP`)
 * where the fix is the --triton address with the other scheme.
 */
function cliHints(triton: string): (detail: string) => string {
  const endpoint = parseTritonUrl(triton, { field: '--triton' });
  const hostPort = /^[a-z]+:\/\/([^/]+)/i.exec(triton)?.[1];
  let own: (detail: string) => string = (detail) => detail;
  if (endpoint.protocol === 'grpc' && 'baseUrl' in endpoint) {
    const dialed = new RegExp(`${endpoint.baseUrl.replace(/[.[\]]/g, '\\$&')}(?![\\w.:-])`, 'gi');
    own = (detail) => detail.replace(dialed, () => triton);
  } else if (endpoint.protocol === 'grpc') {
    // A dns: name dials the addresses it resolves to: those keep their host:port, in gRPC's scheme.
    own = (detail) =>
      detail.replace(
        /\b(the server at |the connection to )http(s?):\/\//g,
        (_, lead: string, tls: string) => `${lead}grpc${tls}://`,
      );
  }
  if (hostPort === undefined) return own;
  return (detail) =>
    own(detail)
      .replace('use httpTransport for HTTP', `use --triton http://${hostPort} if this is its HTTP port`)
      .replace('use grpcTransport for gRPC', `use --triton grpc://${hostPort} if this is its gRPC port`);
}

function fail(message: string): never {
  process.stderr.write(`trtllm-openai: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function integerFlag(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    fail(`--${name} must be a non-negative integer (got ${JSON.stringify(value)})`);
  return n;
}

async function main(): Promise<void> {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse().values;
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const template = values['chat-template'] ?? 'auto';
  if (!(CHAT_TEMPLATE_CHOICES as readonly string[]).includes(template)) {
    fail(
      `--chat-template must be one of ${CHAT_TEMPLATE_CHOICES.join(', ')} (got ${JSON.stringify(template)})`,
    );
  }
  const toolCallParser = values['tool-call-parser'] ?? 'auto';
  if (!(TOOL_CALL_PARSERS as readonly string[]).includes(toolCallParser)) {
    fail(
      `--tool-call-parser must be one of ${TOOL_CALL_PARSERS.join(', ')} (got ${JSON.stringify(toolCallParser)})`,
    );
  }
  const triton = values.triton ?? 'grpc://localhost:8001';
  const waitSeconds = Number(values['triton-wait'] ?? '30');
  if (!Number.isFinite(waitSeconds) || waitSeconds < 0)
    fail(
      `--triton-wait must be a non-negative number of seconds (got ${JSON.stringify(values['triton-wait'])})`,
    );
  const drainSeconds = Number(values['drain-timeout'] ?? '30');
  if (!Number.isFinite(drainSeconds) || drainSeconds < 0)
    fail(
      `--drain-timeout must be a non-negative number of seconds (got ${JSON.stringify(values['drain-timeout'])})`,
    );
  let wanted: CliModels;
  try {
    if (values.config !== undefined) {
      if (values.model !== undefined || values.lora !== undefined)
        throw new UsageError('--config gives the models: leave out --model and --lora');
      wanted = await modelsFromConfig(values.config);
    } else wanted = modelsFromFlags(values.model ?? [], values.lora ?? []);
  } catch (err) {
    if (err instanceof UsageError) fail(err.message);
    throw err;
  }
  const servedName = values['served-model-name'];
  if (servedName !== undefined && (wanted.all || wanted.models.length > 1))
    fail('--served-model-name names the one model; with several, give each name=<served name> in --model');
  let workers: number;
  try {
    workers = workersFlag(values.workers);
  } catch (err) {
    if (err instanceof UsageError) fail(err.message);
    throw err;
  }
  const log = (m: string) => process.stderr.write(`trtllm-openai: ${m}\n`);
  // The flags are checked once, above; each worker then runs the rest, Triton's check included.
  if (workers > 1 && !isClusterWorker()) {
    runPrimary(workers, log);
    return;
  }
  const worker = isClusterWorker() ? workerHooks() : undefined;
  const transport = transportFromUrl(triton, { field: '--triton' });
  const tokenizers = new Map<string, Promise<Tokenizer | undefined>>();
  const tokenizerOf = (dir: string | undefined): Promise<Tokenizer | undefined> => {
    if (dir === undefined) return Promise.resolve(undefined);
    let loaded = tokenizers.get(dir);
    if (loaded === undefined) {
      loaded = loadTokenizerDir(dir, { field: '--tokenizer-dir' });
      tokenizers.set(dir, loaded);
    }
    return loaded;
  };
  const defaultDir = values['tokenizer-dir'];
  const models: CliModel[] = wanted.all
    ? (await servableModels(transport, await tokenizerOf(defaultDir), waitSeconds * 1000, log, triton)).map(
        (model) => ({ model }),
      )
    : wanted.models.map((m, i) => (i === 0 && servedName !== undefined ? { ...m, name: servedName } : m));
  const served: ServedModelOptions[] = [];
  // A missing model is named by where the user wrote it: its --model, or its place in --config.
  const modelSetting = (i: number): string =>
    values.config !== undefined && !wanted.all ? `--config ${values.config}: models[${i}].model` : '--model';
  for (const [i, m] of models.entries()) {
    const dir = m.tokenizerDir ?? defaultDir;
    const tokenizer = await tokenizerOf(dir);
    // A client of its own for the check: closing it would close the shared transport, so it is left.
    await waitForBackend({
      llm: new TritonLlm({ transport, model: m.model, ...(tokenizer !== undefined ? { tokenizer } : {}) }),
      transport,
      waitMs: waitSeconds * 1000,
      log,
      settings: {
        triton: `Triton at ${triton}`,
        model: modelSetting(i),
        wait: '--triton-wait',
        hints: cliHints(triton),
      },
      tokenizer: { present: tokenizer !== undefined, setting: cliTokenizerSetting(dir) },
    });
    served.push({
      ...m,
      ...(m.adapters !== undefined ? { adapters: await Promise.all(m.adapters.map(adapterFiles)) } : {}),
      chatTemplate: m.chatTemplate ?? (template as ChatTemplateChoice),
      ...(dir !== undefined ? { tokenizerDir: dir } : {}),
      ...(tokenizer !== undefined ? { tokenizer } : {}),
    });
  }
  const apiKey = values['api-key'] ?? process.env.TRTLLM_OPENAI_API_KEY;
  const maxConcurrency = values['max-concurrency'];
  const hooks: ServerHooks = worker?.hooks ?? {};
  const server = createServerWith(
    {
      transport,
      models: served,
      toolCallParser: toolCallParser as ToolCallParserChoice,
      defaultMaxTokens: integerFlag('default-max-tokens', values['default-max-tokens'], 1024),
      ...(apiKey !== undefined && apiKey.length > 0 ? { apiKey } : {}),
      ...(maxConcurrency !== undefined
        ? { maxConcurrency: Math.max(1, integerFlag('max-concurrency', maxConcurrency, 1)) }
        : {}),
      maxQueue: integerFlag('max-queue', values['max-queue'], 0),
      retryAfterSeconds: integerFlag('retry-after', values['retry-after'], 1),
    },
    hooks,
  );
  const url = await server.listen(integerFlag('port', values.port, 3000), values.host ?? '127.0.0.1');
  worker?.listening();
  const names = served.flatMap((m) => [m.name ?? m.model, ...(m.adapters ?? []).map((a) => a.name)]);
  const who = worker !== undefined ? ` (worker ${process.pid})` : '';
  process.stdout.write(`trtllm-openai: serving ${names.map((n) => `'${n}'`).join(', ')} at ${url}${who}\n`);
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: draining (up to ${drainSeconds} s for requests in flight)`);
    void server
      .drain({ timeoutMs: drainSeconds * 1000 })
      .then(() => transport.close())
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

/** An adapter with its `dir=` read into the weights and config the C++ model takes. */
async function adapterFiles(adapter: CliAdapter): Promise<LoraAdapterOptions> {
  const { dir, ...rest } = adapter;
  if (dir === undefined) return rest;
  return { ...rest, ...(await loadLoraDir(dir)) };
}

/**
 * `--model all`: the repository's servable models, waiting (with a line per attempt) up to
 * `waitMs` for Triton to answer; none at all is an error naming why each was skipped.
 */
async function servableModels(
  transport: Transport,
  tokenizer: Tokenizer | undefined,
  waitMs: number,
  log: (m: string) => void,
  triton: string,
): Promise<string[]> {
  const started = performance.now();
  for (let attempt = 1; ; attempt++) {
    try {
      const found = await listServableModels(transport, tokenizer !== undefined ? { tokenizer } : {});
      for (const s of found.skipped) log(`--model all: skipping '${s.model}': ${s.reason}`);
      if (found.models.length === 0)
        throw new TritonLlmError('not_found', `--model all: Triton at ${triton} has no model to serve`);
      return [...found.models];
    } catch (err) {
      const e = TritonLlmError.from(err, 'internal');
      const left = waitMs - (performance.now() - started);
      if ((e.code !== 'unavailable' && e.code !== 'deadline_exceeded') || left <= 0) throw e;
      log(`attempt ${attempt}: Triton at ${triton} did not answer (${e.message}); trying again`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, left)));
    }
  }
}

function parse() {
  return parseArgs({
    options: {
      triton: { type: 'string' },
      model: { type: 'string', multiple: true },
      lora: { type: 'string', multiple: true },
      config: { type: 'string' },
      'max-concurrency': { type: 'string' },
      'max-queue': { type: 'string' },
      'retry-after': { type: 'string' },
      'drain-timeout': { type: 'string' },
      workers: { type: 'string' },
      'served-model-name': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'api-key': { type: 'string' },
      'chat-template': { type: 'string' },
      'tokenizer-dir': { type: 'string' },
      'default-max-tokens': { type: 'string' },
      'triton-wait': { type: 'string' },
      'tool-call-parser': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`trtllm-openai: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
