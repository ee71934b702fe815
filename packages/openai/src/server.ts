import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type LoraOptions,
  type TelemetryOptions,
  type Tokenizer,
  type Transport,
  TritonLlm,
  TritonLlmError,
} from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import { type ChatTemplateChoice, TOOL_CALL_PARSERS, type ToolCallParserChoice } from '@trtllm/tokenizers';
import type { Registry } from 'prom-client';
import { Admission, isAtCapacity, type Release } from './admission.js';
import { inRequestTerms } from './api-error.js';
import { apiKeyCheck } from './api-key.js';
import { waitForBackend } from './backend-check.js';
import { chatCompletionsFormat } from './chat-completions.js';
import { completionsFormat } from './completions.js';
import { Drain } from './drain.js';
import { type EndpointContext, type EndpointFormat, respond } from './endpoint.js';
import { readJsonBody, sendError, sendJson } from './http-io.js';
import { unixSeconds } from './ids.js';
import { GatewayMetrics } from './metrics/gateway-metrics.js';
import { inTokenizerTerms, libraryTokenizerSetting } from './raw-model.js';
import {
  type BaseModelInput,
  type LoraAdapterOptions,
  loraMissedCache,
  loraOfRequest,
  ModelTable,
  type ServedModel,
  type ServedModelOptions,
} from './served-models.js';
import { ownResponses } from './sse.js';

// A path of these characters alone is its own URL pathname: no query, escapes, dot segments or
// leading `//` (which URL reads as a host).
const PLAIN_PATH = /^\/(?:[\w-][\w/-]*)?$/;

/** The request's path without trailing slashes; `new URL` only when the path needs parsing. */
function pathOf(url: string): string {
  const pathname = PLAIN_PATH.test(url) ? url : new URL(url, 'http://localhost').pathname;
  return pathname.replace(/\/+$/, '');
}

/** Where the server's generations go: a ready client, a transport and one model, or a transport and several. */
export type OpenAiServerBackend =
  | { readonly llm: TritonLlm }
  | {
      readonly transport: Transport;
      readonly model: string;
      readonly tokenizer?: Tokenizer;
    }
  | {
      readonly transport: Transport;
      /**
       * The models to serve, each under its own name with its own chat template, tokenizer and
       * LoRA adapters; requests pick one by `model`. `listServableModels` finds every one Triton has.
       */
      readonly models: readonly ServedModelOptions[];
    };

/** Options of {@link createOpenAiServer}. */
export type OpenAiServerOptions = OpenAiServerBackend & {
  /** The model name clients send and see (one model only); default: the Triton model's name. */
  readonly modelName?: string;
  /** When set, every request must carry `Authorization: Bearer <apiKey>`. */
  readonly apiKey?: string;
  /** `auto` (default): the model's own template from `tokenizerDir`, else ChatML; or a built-in one. With `models`, the default of each. */
  readonly chatTemplate?: ChatTemplateChoice;
  /** A Hugging Face tokenizer directory: its tokenizer_config.json gives the chat template and special tokens. With `models`, the default of each. */
  readonly tokenizerDir?: string;
  /**
   * Counts prompt tokens for models that do not report them (ensembles before the 2026 backend)
   * and gives log-prob tokens their text. With `transport`, also what the raw model is driven
   * with. With `models`, the default of each.
   */
  readonly tokenizer?: Tokenizer;
  /** LoRA adapters of the one model (`llm`, or `transport` and `model`), each served under its own name. */
  readonly adapters?: readonly LoraAdapterOptions[];
  /** `max_tokens` of a chat request that gives none (OpenAI's limit is the context; Triton needs a number). Default 1024. */
  readonly defaultMaxTokens?: number;
  /**
   * How long {@link OpenAiServer.ready} waits for Triton to answer and the model to be ready, in
   * milliseconds, trying again with a warning per attempt. Default 30 000.
   */
  readonly tritonWaitMs?: number;
  /** Largest request body accepted, in bytes. Default 4 MiB. */
  readonly maxBodyBytes?: number;
  /**
   * How `tool_choice: "auto"` reads calls out of the model's text: `hermes` (`<tool_call>{json}</tool_call>`,
   * Qwen 2.5/3 and Hermes), `llama3_json` (`{"name": ..., "parameters": ...}`, Llama 3.x), or `auto`
   * (default): whichever format the chat template teaches.
   */
  readonly toolCallParser?: ToolCallParserChoice;
  /**
   * Most completion and chat requests running upstream at once; default: no limit. Past it,
   * requests wait in a queue of `maxQueue`, and past that are answered 429 with `Retry-After`.
   */
  readonly maxConcurrency?: number;
  /** Requests that may wait for a slot under `maxConcurrency`. Default 0: refused at once. */
  readonly maxQueue?: number;
  /** `Retry-After` of a 429 past the limit, in whole seconds. Default 1. */
  readonly retryAfterSeconds?: number;
  /**
   * OpenTelemetry for the clients this server makes from `transport` (a span per upstream
   * request, GenAI histograms); a client given as `llm` keeps its own.
   */
  readonly telemetry?: TelemetryOptions;
  /**
   * Where warnings go (default console.warn): model output that looked like a tool call but was
   * not one, and, with `transport`, the SDK's own warnings.
   */
  readonly logger?: {
    /** Receives one human-readable warning; must not throw. */
    warn(message: string): void;
  };
};

/** A running (or ready to run) OpenAI-compatible server. */
export interface OpenAiServer {
  /**
   * Checks the backend before serving: waits (up to `tritonWaitMs`, a warning per attempt) until
   * Triton answers and every model is ready, and reads their configs. Rejects with a
   * `TritonLlmError` saying what is wrong: Triton not answering, a model it does not have
   * (naming its models and the closest), or the raw `tensorrt_llm` model given as `transport` and
   * `model` without a `tokenizer` (`failed_precondition`). Optional: `listen()` does not call it, so a server may
   * start before Triton does; the `trtllm-openai` CLI always calls it.
   */
  ready(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Listens on `port` (0 picks a free one) and `host` (default 127.0.0.1); resolves to the base URL, e.g. `http://127.0.0.1:3000/v1`. */
  listen(port: number, host?: string): Promise<string>;
  /**
   * Graceful shutdown (a rolling update's SIGTERM): from now on new requests and `/health` are
   * answered 503 (`unavailable`, `Connection: close`), requests in flight finish for up to
   * `timeoutMs` (default 30 000), then the rest end (a stream with a last SSE error event, code
   * `unavailable`) and the server closes. The backend stays open: its owner closes it.
   */
  drain(options?: { readonly timeoutMs?: number }): Promise<void>;
  /** Stops accepting connections and ends open ones (streams in flight are cancelled upstream). The backend stays open: its owner closes it. */
  close(): Promise<void>;
  /** The request handler, to mount in an existing `node:http` server. */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
}

/** The Triton model names the options serve, as `createOpenAiServer` takes them. */
function baseInputs(options: OpenAiServerOptions): BaseModelInput[] {
  const makeLlm = (transport: Transport, model: string, tokenizer: Tokenizer | undefined) =>
    new TritonLlm({
      transport,
      model,
      ...(tokenizer !== undefined ? { tokenizer } : {}),
      ...(options.logger !== undefined ? { logger: options.logger } : {}),
      ...(options.telemetry !== undefined ? { telemetry: options.telemetry } : {}),
    });
  if ('models' in options) {
    if (!Array.isArray(options.models) || options.models.length === 0)
      throw invalidArgument('models', options.models, 'must be a non-empty array of { model, name?, ... }');
    if (options.modelName !== undefined)
      throw invalidArgument(
        'modelName',
        options.modelName,
        'names the one model; with models, give each its name',
      );
    if (options.adapters !== undefined)
      throw invalidArgument(
        'adapters',
        options.adapters,
        "is the one model's; with models, give each its adapters",
      );
    return options.models.map((m, i) => {
      if (m === null || typeof m !== 'object' || typeof m.model !== 'string' || m.model.length === 0)
        throw invalidArgument(`models[${i}].model`, m?.model, 'must be the name of a Triton model');
      const tokenizer = m.tokenizer ?? options.tokenizer;
      const tokenizerDir = m.tokenizerDir ?? options.tokenizerDir;
      return {
        id: m.name ?? m.model,
        llm: makeLlm(options.transport, m.model, tokenizer),
        tokenizer,
        tokenizerDir,
        chatTemplate: m.chatTemplate ?? options.chatTemplate,
        tokenizerSetting: libraryTokenizerSetting('transport', tokenizerDir !== undefined),
        adapters: m.adapters,
        field: `models[${i}]`,
      };
    });
  }
  const llm = 'llm' in options ? options.llm : makeLlm(options.transport, options.model, options.tokenizer);
  return [
    {
      id: options.modelName ?? llm.model,
      llm,
      tokenizer: options.tokenizer,
      tokenizerDir: options.tokenizerDir,
      chatTemplate: options.chatTemplate,
      tokenizerSetting: libraryTokenizerSetting(
        'llm' in options ? 'llm' : 'transport',
        options.tokenizerDir !== undefined,
      ),
      adapters: options.adapters,
      field: 'modelName',
    },
  ];
}

/** Resolves once the request's body has been read and dropped (or the client left). */
function bodyRead(req: IncomingMessage): Promise<void> {
  if (req.readableEnded) return Promise.resolve();
  return new Promise<void>((resolve) => {
    req.once('end', resolve);
    req.once('close', resolve);
    req.resume();
  });
}

/** A format whose upstream requests carry an adapter's LoRA inputs. */
function withLora(format: EndpointFormat, lora: LoraOptions | undefined): EndpointFormat {
  if (lora === undefined) return format;
  return { ...format, params: { ...format.params, sampling: { ...format.params.sampling, lora } } };
}

/** The endpoints a request is counted under in `/metrics` (any other path is `other`, keeping the label set small). */
const COUNTED = new Set(['/v1/models', '/v1/completions', '/v1/chat/completions']);

/**
 * An OpenAI-compatible HTTP server in front of Triton: `GET /v1/models`, `POST /v1/completions`
 * and `POST /v1/chat/completions`, streaming (SSE) or not, so that existing OpenAI clients work
 * unchanged; one model or several, and LoRA adapters as model names. `GET /metrics` is Prometheus
 * text, `GET /health` Triton's and the server's readiness (503 while draining), `GET /health/live`
 * the process's liveness. A client that disconnects cancels its
 * upstream request.
 */
export function createOpenAiServer(options: OpenAiServerOptions): OpenAiServer {
  return createServerWith(options, {});
}

/** What the CLI's cluster workers change in a server (not public: `--workers` is the CLI's). */
export interface ServerHooks {
  /** Given the server's own registry, what `GET /metrics` answers instead (every worker's sum). */
  readonly metrics?: (local: Registry) => () => Promise<{ text: string; contentType: string }>;
  /** Headers set on every response (`x-trtllm-worker`: which worker answered). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** {@link createOpenAiServer} with the CLI's hooks. */
export function createServerWith(options: OpenAiServerOptions, hooks: ServerHooks): OpenAiServer {
  if (options.apiKey !== undefined && (typeof options.apiKey !== 'string' || options.apiKey.length === 0)) {
    throw invalidArgument('apiKey', options.apiKey, 'must be a non-empty string when given');
  }
  const toolCallParser = options.toolCallParser ?? 'auto';
  if (!TOOL_CALL_PARSERS.includes(toolCallParser)) {
    throw invalidArgument('toolCallParser', toolCallParser, `must be one of ${TOOL_CALL_PARSERS.join(', ')}`);
  }
  const logger = options.logger ?? { warn: (message: string) => console.warn(message) };
  const defaultMaxTokens = options.defaultMaxTokens ?? 1024;
  if (!Number.isInteger(defaultMaxTokens) || defaultMaxTokens < 1) {
    throw invalidArgument('defaultMaxTokens', defaultMaxTokens, 'must be a positive integer');
  }
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const tritonWaitMs = options.tritonWaitMs ?? 30_000;
  if (typeof tritonWaitMs !== 'number' || !Number.isFinite(tritonWaitMs) || tritonWaitMs < 0) {
    throw invalidArgument('tritonWaitMs', tritonWaitMs, 'must be a non-negative number of milliseconds');
  }
  const table = new ModelTable(baseInputs(options));
  const admission = new Admission(
    options.maxConcurrency,
    options.maxQueue ?? 0,
    options.retryAfterSeconds ?? 1,
  );
  const metrics = new GatewayMetrics(() => admission.waiting);
  const scrape = hooks.metrics?.(metrics.registry) ?? (() => metrics.scrape());
  const drain = new Drain();
  const created = unixSeconds();
  const checkKey = options.apiKey !== undefined ? apiKeyCheck(options.apiKey) : undefined;
  // vLLM's listing: `parent` names an adapter's base model, `root` what it runs on.
  const entry = (m: ServedModel) => ({
    id: m.id,
    object: 'model',
    created,
    owned_by: 'triton',
    root: m.lora?.path ?? m.base.llm.model,
    parent: m.parent ?? null,
  });
  const first = table.bases[0]!;

  /** One generation request, from the model it names to its answer. */
  const generate = async (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    ctxBase: { signal: AbortSignal; request: string; arrived: number },
    routed: (model: ServedModel) => void,
  ): Promise<void> => {
    const release: Release = await admission.acquire(ctxBase.signal);
    res.once('close', release);
    const body = await readJsonBody(req, maxBodyBytes);
    const model = table.route(body.model);
    routed(model);
    const meter = metrics.begin(model.id, ctxBase.arrived);
    res.once('close', () => meter.end());
    const { base } = model;
    const ctx: EndpointContext = {
      llm: base.llm,
      tokenizer: base.tokenizer,
      modelName: model.id,
      signal: ctxBase.signal,
      request: ctxBase.request,
      meter,
      shutdown: drain.shutdownSignal,
    };
    if (path === '/v1/completions') {
      const format = await completionsFormat(body, ctx);
      await respond(res, ctx, withLora(format, loraOfRequest(model)));
      return;
    }
    const chat = {
      ...ctx,
      template: await base.template,
      defaultMaxTokens,
      toolCallParser,
      warn: (m: string) => logger.warn(m),
    };
    const format = await chatCompletionsFormat(body, chat);
    await respond(res, ctx, withLora(format, loraOfRequest(model)));
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const arrived = performance.now();
    const upstream = new AbortController();
    let clientLeft = false;
    // 'close' before the response finished means the client went away: cancel upstream work.
    res.on('close', () => {
      if (res.writableFinished) return;
      clientLeft = true;
      upstream.abort();
    });
    const path = pathOf(req.url ?? '/');
    const request = `${req.method ?? ''} ${path || '/'}`;
    let served: ServedModel | undefined;
    if (req.method === 'GET' && path === '/metrics') {
      scrape().then(
        ({ text, contentType }) => {
          res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
          res.end(text);
        },
        (err: unknown) => sendError(res, err),
      );
      return;
    }
    if (path !== '/health' && path !== '/health/live') {
      const endpoint = COUNTED.has(path)
        ? path
        : path.startsWith('/v1/models/')
          ? '/v1/models/{id}'
          : 'other';
      res.once('close', () =>
        metrics.answered(served?.id ?? '', endpoint, clientLeft ? 499 : res.statusCode),
      );
    }
    const route = async (): Promise<void> => {
      // Liveness: the process answers, draining or not (a failing probe would restart it mid-drain).
      if (req.method === 'GET' && path === '/health/live') {
        sendJson(res, 200, { status: drain.draining ? 'draining' : 'ok' });
        return;
      }
      if (req.method === 'GET' && path === '/health') {
        const ready =
          !drain.draining &&
          (await Promise.all(table.bases.map((b) => b.llm.modelReady({ signal: upstream.signal })))
            .then((all) => all.every(Boolean))
            .catch(() => false));
        sendJson(res, ready ? 200 : 503, {
          status: ready ? 'ok' : drain.draining ? 'draining' : 'unavailable',
        });
        return;
      }
      if (drain.draining) {
        // Read to its end first: the answer closes the connection, and a close while the client
        // still sends would reach it as a reset instead of the 503.
        await bodyRead(req);
        throw drain.refusal();
      }
      checkKey?.(req.headers);
      if (req.method === 'GET' && path === '/v1/models') {
        sendJson(res, 200, { object: 'list', data: table.models.map(entry) });
        return;
      }
      if (req.method === 'GET' && path.startsWith('/v1/models/')) {
        served = table.get(decodeURIComponent(path.slice('/v1/models/'.length)));
        sendJson(res, 200, entry(served));
        return;
      }
      if (req.method === 'POST' && (path === '/v1/completions' || path === '/v1/chat/completions')) {
        await generate(req, res, path, { signal: upstream.signal, request, arrived }, (m) => {
          served = m;
        });
        return;
      }
      throw new TritonLlmError('not_found', `Unknown request URL: ${req.method ?? ''} ${path || '/'}`);
    };
    const done = route().catch(async (err: unknown) => {
      const base = served?.base ?? first;
      // A server not checked by ready() meets the raw model's missing tokenizer here.
      const e = drain.shutdownSignal.aborted
        ? drain.shutdownSignal.reason
        : await inTokenizerTerms(err, base.llm, base.tokenizerSetting, request);
      loraMissedCache(served, e);
      if (clientLeft) return;
      const openAi = inRequestTerms(e, request);
      metrics.failed(served?.id ?? '', openAi);
      sendError(res, openAi, isAtCapacity(err) ? { 'retry-after': String(admission.retryAfter) } : {});
    });
    drain.track(
      done.then(() => (res.closed ? undefined : new Promise<void>((resolve) => res.once('close', resolve)))),
      upstream,
    );
  };

  const server: Server = createServer((req, res) => {
    ownResponses.add(res);
    for (const [name, value] of Object.entries(hooks.headers ?? {})) res.setHeader(name, value);
    // A connection kept alive through the drain would carry new requests to a server going away.
    if (drain.draining) res.shouldKeepAlive = false;
    handler(req, res);
  });
  const close = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (!server.listening) {
        resolve();
        return;
      }
      server.close((err) => (err ? reject(err) : resolve()));
      // Streams in flight would otherwise keep close() waiting until they end.
      server.closeAllConnections();
    });
  return {
    handler,
    async ready(readyOptions) {
      for (const [i, base] of table.bases.entries()) {
        const byLlm = 'llm' in options;
        await waitForBackend({
          llm: base.llm,
          transport: 'transport' in options ? options.transport : undefined,
          waitMs: tritonWaitMs,
          log: (m) => logger.warn(m),
          settings: {
            triton: 'Triton',
            model: 'models' in options ? `models[${i}].model` : 'model',
            wait: 'tritonWaitMs',
          },
          // A client given as llm may hold a tokenizer this server cannot see: only requests tell.
          ...(!byLlm
            ? { tokenizer: { present: base.tokenizer !== undefined, setting: base.tokenizerSetting } }
            : {}),
          ...(readyOptions?.signal !== undefined ? { signal: readyOptions.signal } : {}),
        });
      }
    },
    async listen(port, host = '127.0.0.1') {
      await Promise.all(table.bases.map((b) => b.template));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const address = server.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${shown}:${address.port}/v1`;
    },
    async drain(drainOptions) {
      const timeoutMs = drainOptions?.timeoutMs ?? 30_000;
      if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0)
        throw invalidArgument('timeoutMs', timeoutMs, 'must be a non-negative number of milliseconds');
      // The listener and idle kept-alive connections stay open while draining: a readiness probe
      // reads 503 rather than a refused connection, and a request that still arrives is told to
      // go elsewhere (with `Connection: close`) instead of meeting a connection closed under it.
      await drain.drain(timeoutMs);
      await close();
    },
    close,
  };
}
