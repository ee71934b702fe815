import { TritonLlmError } from '@trtllm/sdk';
import { type CallOptions, invalidArgument } from '@trtllm/sdk/transport';
import type { EngineRequest, HttpEngine } from '../engine/index.js';
import { type ErrorContext, errorFromHttp } from '../errors.js';
import { fetchEngine } from '../fetch/index.js';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_SILENCE_TIMEOUT_MS,
  type FetchFunction,
  type HttpTransportOptions,
} from '../options.js';
import { normalizeBaseUrl } from './base-url.js';
import { jsonOf, textOf } from './body.js';
import { Call } from './call.js';
import { checkHeaders, mergeHeaders } from './headers.js';
import { type Answer, type BodyLimits, WholeAnswer } from './unary.js';

// Error bodies are read only to quote them; a huge one is not worth waiting for.
export const ERROR_BODY_LIMIT = 64 * 1024;

/** What one request sends besides the caller's options. */
export interface Send {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: Uint8Array<ArrayBuffer> | string;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
}

/** An engine for one base URL: the Node entry point's sockets. */
export type EngineFactory = (baseUrl: string) => HttpEngine;

// The key of requests that add no headers of their own.
const NO_HEADERS: ReadonlyArray<readonly [string, string]> = [];

/**
 * The shared state of one transport: its engines (fetch, and the entry point's for streams), the
 * headers, the limits, and the calls in flight (so that `close()` can abort them).
 */
export class HttpClient {
  /** The largest answer, event or announced chunk read (`maxResponseBytes`). */
  readonly maxResponseBytes: number;
  /** How long a stream that has begun may go without a byte (`silenceTimeoutMs`); 0: for ever. */
  readonly silenceTimeoutMs: number;
  /** Carries streams: the entry point's engine (Node's sockets), unless the caller brought a `fetch`. */
  readonly streams: HttpEngine;
  /** Carries unary calls: fetch, on every runtime. */
  private readonly unary: HttpEngine;
  private readonly staticHeaders: ReadonlyArray<readonly [string, string]>;
  private readonly timeoutMs: number | undefined;
  private readonly active = new Set<Call>();
  // One function for every call rather than a closure each (an idle stream keeps its call).
  private readonly release = (call: Call): void => {
    this.active.delete(call);
  };
  private closed = false;
  /**
   * The headers of requests without headers of the call's own, by the protocol's header list: one
   * object for all of them, so an engine may keep what it derives from it.
   */
  private readonly sharedHeaders = new WeakMap<object, Headers>();

  constructor(options: HttpTransportOptions, engine?: EngineFactory) {
    if (typeof options !== 'object' || options === null) {
      throw invalidArgument('options', options, 'httpTransport needs an options object with baseUrl');
    }
    const baseUrl = normalizeBaseUrl(options.baseUrl);
    if (options.fetch !== undefined && typeof options.fetch !== 'function') {
      throw invalidArgument('fetch', options.fetch, 'must be a function');
    }
    // Looked up per call and called as a plain function: browsers refuse `fetch` detached from window.
    const fetch: FetchFunction = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.staticHeaders = checkHeaders(options.headers, 'headers');
    const { timeoutMs, maxResponseBytes, silenceTimeoutMs } = options;
    if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw invalidArgument('timeoutMs', timeoutMs, 'must be a positive number of milliseconds');
    }
    if (maxResponseBytes !== undefined && !(Number.isSafeInteger(maxResponseBytes) && maxResponseBytes > 0)) {
      throw invalidArgument('maxResponseBytes', maxResponseBytes, 'must be a positive integer');
    }
    if (silenceTimeoutMs !== undefined && !(Number.isFinite(silenceTimeoutMs) && silenceTimeoutMs >= 0)) {
      throw invalidArgument(
        'silenceTimeoutMs',
        silenceTimeoutMs,
        'must be a number of milliseconds, 0 or more',
      );
    }
    this.timeoutMs = timeoutMs;
    this.silenceTimeoutMs = silenceTimeoutMs ?? DEFAULT_SILENCE_TIMEOUT_MS;
    this.maxResponseBytes = maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    // A fetch of the caller's own (tracing, a proxy agent, custom TLS) carries every call.
    this.unary = fetchEngine(baseUrl, fetch);
    this.streams = options.fetch === undefined && engine !== undefined ? engine(baseUrl) : this.unary;
  }

  /** Starts a call: the caller's signal and deadline apply from here until `call.finish()`. */
  begin(options: CallOptions | undefined, context: ErrorContext): Call {
    if (this.closed) {
      throw new TritonLlmError('unavailable', `${context.what}: the transport is closed`, {
        retryable: false,
      });
    }
    const call = new Call(context, options?.signal, options?.timeoutMs ?? this.timeoutMs, this.release);
    this.active.add(call);
    return call;
  }

  /** The headers of one request: static, then per-call (checked here), then the protocol's own. */
  headersFor(send: Send, options: CallOptions | undefined): Headers {
    return mergeHeaders(this.staticHeaders, checkHeaders(options?.headers, 'headers'), send.headers ?? []);
  }

  /** One request for an engine; per-call headers are checked here, before anything goes out. */
  request(send: Send, options: CallOptions | undefined): EngineRequest {
    let headers: Headers;
    if (options?.headers === undefined) {
      const key = send.headers ?? NO_HEADERS;
      headers = this.sharedHeaders.get(key) ?? this.headersFor(send, options);
      this.sharedHeaders.set(key, headers);
    } else {
      headers = this.headersFor(send, options);
    }
    const { method, path, body } = send;
    const maxChunkBytes = this.maxResponseBytes;
    return body === undefined
      ? { method, path, headers, maxChunkBytes }
      : { method, path, headers, body, maxChunkBytes };
  }

  /**
   * Sends one unary request and reads its answer whole; a non-2xx answer is thrown as the error it
   * stands for, with its body quoted. Per-call headers are checked before anything goes out.
   */
  async ok(call: Call, send: Send, options: CallOptions | undefined): Promise<Answer> {
    const answer = await this.answer(call, send, options, {
      ok: this.maxResponseBytes,
      error: ERROR_BODY_LIMIT,
    });
    if (answer.status >= 200 && answer.status < 300) return answer;
    throw errorFromHttp(answer.status, textOf(answer.body), call.context);
  }

  /** A GET (or POST) whose 2xx answer is JSON. */
  async json(send: Send, options: CallOptions | undefined, context: ErrorContext): Promise<unknown> {
    const call = this.begin(options, context);
    try {
      return jsonOf((await this.ok(call, send, options)).body, context);
    } finally {
      call.finish();
    }
  }

  /** A request whose answer is only its status: 200 is true, any other status false. */
  async probe(path: string, options: CallOptions | undefined): Promise<boolean> {
    const call = this.begin(options, { what: `GET ${path}` });
    try {
      // The status is the whole answer; the body is drained only so the connection can be reused,
      // and a failure while draining changes nothing about that answer.
      const limits = { ok: ERROR_BODY_LIMIT, error: ERROR_BODY_LIMIT, statusOnly: true };
      const answer = await this.answer(call, { method: 'GET', path }, options, limits);
      return answer.status === 200;
    } finally {
      call.finish();
    }
  }

  private answer(call: Call, send: Send, options: CallOptions | undefined, limits: BodyLimits) {
    const request = this.request(send, options);
    call.throwIfAborted();
    return new Promise<Answer>((resolve, reject) => {
      const reader = new WholeAnswer(call, limits, resolve, reject);
      reader.exchange = this.unary.request(request, reader);
    });
  }

  /** Aborts the calls in flight; later calls fail with `unavailable`. */
  close(): void {
    this.closed = true;
    for (const call of [...this.active]) call.abort('closed');
    this.streams.close();
    this.unary.close();
  }
}

/**
 * The call's options without its retry plan: a stream keeps its options for the stop request it
 * may send, and the plan (with the closures it holds) is of no use once the request is sent.
 */
export function withoutRetryPlan(options: CallOptions | undefined): CallOptions | undefined {
  if (options?.retryPlan === undefined) return options;
  const { retryPlan: _plan, ...rest } = options;
  return rest;
}
