import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Tokenizer, type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import {
  type ChatTemplate,
  type ChatTemplateChoice,
  loadChatTemplate,
  TOOL_CALL_PARSERS,
  type ToolCallParserChoice,
} from '@trtllm/tokenizers';
import { inRequestTerms } from './api-error.js';
import { apiKeyCheck } from './api-key.js';
import { waitForBackend } from './backend-check.js';
import { unknownModel } from './capabilities.js';
import { chatCompletionsFormat } from './chat-completions.js';
import { completionsFormat } from './completions.js';
import { type EndpointContext, respond } from './endpoint.js';
import { readJsonBody, sendError, sendJson } from './http-io.js';
import { unixSeconds } from './ids.js';
import { inTokenizerTerms, libraryTokenizerSetting } from './raw-model.js';
import { ownResponses } from './sse.js';

// A path of these characters alone is its own URL pathname: no query, escapes, dot segments or
// leading `//` (which URL reads as a host).
const PLAIN_PATH = /^\/(?:[\w-][\w/-]*)?$/;

/** The request's path without trailing slashes; `new URL` only when the path needs parsing. */
function pathOf(url: string): string {
  const pathname = PLAIN_PATH.test(url) ? url : new URL(url, 'http://localhost').pathname;
  return pathname.replace(/\/+$/, '');
}

/** Where the server's generations go: a ready client, or a transport and model to make one from. */
export type OpenAiServerBackend =
  | { readonly llm: TritonLlm }
  | {
      readonly transport: Transport;
      readonly model: string;
      readonly tokenizer?: Tokenizer;
    };

/** Options of {@link createOpenAiServer}. */
export type OpenAiServerOptions = OpenAiServerBackend & {
  /** The model name clients send and see; default: the Triton model's name. */
  readonly modelName?: string;
  /** When set, every request must carry `Authorization: Bearer <apiKey>`. */
  readonly apiKey?: string;
  /** `auto` (default): the model's own template from `tokenizerDir`, else ChatML; or a built-in one. */
  readonly chatTemplate?: ChatTemplateChoice;
  /** A Hugging Face tokenizer directory: its tokenizer_config.json gives the chat template and special tokens. */
  readonly tokenizerDir?: string;
  /**
   * Counts prompt tokens for models that do not report them (ensembles before the 2026 backend)
   * and gives log-prob tokens their text. With `transport`, also what the raw model is driven with.
   */
  readonly tokenizer?: Tokenizer;
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
   * Triton answers and the model is ready, and reads the model's config. Rejects with a
   * `TritonLlmError` saying what is wrong: Triton not answering, a model it does not have
   * (naming its models and the closest), or the raw `tensorrt_llm` model given as `transport` and
   * `model` without a `tokenizer` (`failed_precondition`). Optional: `listen()` does not call it, so a server may
   * start before Triton does; the `trtllm-openai` CLI always calls it.
   */
  ready(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Listens on `port` (0 picks a free one) and `host` (default 127.0.0.1); resolves to the base URL, e.g. `http://127.0.0.1:3000/v1`. */
  listen(port: number, host?: string): Promise<string>;
  /** Stops accepting connections and ends open ones (streams in flight are cancelled upstream). The backend stays open: its owner closes it. */
  close(): Promise<void>;
  /** The request handler, to mount in an existing `node:http` server. */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
}

/**
 * An OpenAI-compatible HTTP server in front of one Triton model: `GET /v1/models`,
 * `POST /v1/completions` and `POST /v1/chat/completions`, streaming (SSE) or not, so that
 * existing OpenAI clients work unchanged. A client that disconnects cancels its upstream request.
 */
export function createOpenAiServer(options: OpenAiServerOptions): OpenAiServer {
  const llm =
    'llm' in options
      ? options.llm
      : new TritonLlm({
          transport: options.transport,
          model: options.model,
          ...(options.tokenizer !== undefined ? { tokenizer: options.tokenizer } : {}),
          ...(options.logger !== undefined ? { logger: options.logger } : {}),
        });
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
  const modelName = options.modelName ?? llm.model;
  const created = unixSeconds();
  const checkKey = options.apiKey !== undefined ? apiKeyCheck(options.apiKey) : undefined;
  const templateLoad = loadChatTemplate({
    ...(options.chatTemplate !== undefined ? { choice: options.chatTemplate } : {}),
    ...(options.tokenizerDir !== undefined ? { tokenizerDir: options.tokenizerDir } : {}),
  });
  // Awaited by listen() and by chat requests; this keeps an early failure from going unhandled.
  templateLoad.catch(() => undefined);
  const model = { id: modelName, object: 'model', created, owned_by: 'triton' };
  const backend = 'llm' in options ? 'llm' : 'transport';
  const tokenizerSetting = libraryTokenizerSetting(backend, options.tokenizerDir !== undefined);

  const route = async (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    signal: AbortSignal,
  ): Promise<void> => {
    if (req.method === 'GET' && path === '/health') {
      const ready = await llm.modelReady({ signal }).catch(() => false);
      sendJson(res, ready ? 200 : 503, { status: ready ? 'ok' : 'unavailable' });
      return;
    }
    checkKey?.(req.headers);
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: [model] });
      return;
    }
    if (req.method === 'GET' && path.startsWith('/v1/models/')) {
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      if (id !== modelName) throw unknownModel(id, modelName);
      sendJson(res, 200, model);
      return;
    }
    const request = `${req.method} ${path}`;
    const ctx: EndpointContext = { llm, tokenizer: options.tokenizer, modelName, signal, request };
    if (req.method === 'POST' && path === '/v1/completions') {
      const body = await readJsonBody(req, maxBodyBytes);
      await respond(res, ctx, await completionsFormat(body, ctx));
      return;
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      const body = await readJsonBody(req, maxBodyBytes);
      const template: ChatTemplate = await templateLoad;
      const chat = {
        ...ctx,
        template,
        defaultMaxTokens,
        toolCallParser,
        warn: (m: string) => logger.warn(m),
      };
      await respond(res, ctx, await chatCompletionsFormat(body, chat));
      return;
    }
    throw new TritonLlmError('not_found', `Unknown request URL: ${req.method ?? ''} ${path || '/'}`);
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const disconnect = new AbortController();
    // 'close' before the response finished means the client went away: cancel upstream work.
    res.on('close', () => {
      if (!res.writableFinished) disconnect.abort();
    });
    const path = pathOf(req.url ?? '/');
    const request = `${req.method ?? ''} ${path || '/'}`;
    route(req, res, path, disconnect.signal).catch(async (err: unknown) => {
      // A server not checked by ready() meets the raw model's missing tokenizer here.
      const e = await inTokenizerTerms(err, llm, tokenizerSetting, request);
      if (!disconnect.signal.aborted) sendError(res, inRequestTerms(e, request));
    });
  };

  const server: Server = createServer((req, res) => {
    ownResponses.add(res);
    handler(req, res);
  });
  return {
    handler,
    ready: (readyOptions) =>
      waitForBackend({
        llm,
        transport: 'transport' in options ? options.transport : undefined,
        waitMs: tritonWaitMs,
        log: (m) => logger.warn(m),
        settings: { triton: 'Triton', model: 'model', wait: 'tritonWaitMs' },
        // A client given as llm may hold a tokenizer this server cannot see: only requests tell.
        ...(backend === 'transport'
          ? { tokenizer: { present: options.tokenizer !== undefined, setting: tokenizerSetting } }
          : {}),
        ...(readyOptions?.signal !== undefined ? { signal: readyOptions.signal } : {}),
      }),
    async listen(port, host = '127.0.0.1') {
      await templateLoad;
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
    close() {
      return new Promise<void>((resolve, reject) => {
        if (!server.listening) {
          resolve();
          return;
        }
        server.close((err) => (err ? reject(err) : resolve()));
        // Streams in flight would otherwise keep close() waiting until they end.
        server.closeAllConnections();
      });
    },
  };
}
