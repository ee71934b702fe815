import { TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import { ChunkTooLarge, isHttp2Start, MalformedResponse, NotHttp1Response } from '../engine/index.js';
import { type ErrorContext, notHttpEndpoint, protocolError } from '../errors.js';
import { tooLarge } from './body.js';

/** Why a call was aborted. */
type AbortReason = 'cancelled' | 'deadline' | 'closed';

// setTimeout fires at once for delays above 2^31 - 1 ms; such deadlines are effectively none.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One call on the wire: what the caller's signal, the deadline and `close()` all fire (a hook that
 * aborts the call's exchange), and the classification of whatever its engine reports.
 */
export class Call {
  readonly context: ErrorContext;
  private abortHook: (() => void) | undefined;
  private reason: AbortReason | undefined;
  private readonly callerSignal: AbortSignal | undefined;
  private readonly timeoutMs: number | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  // Made only for a caller's signal: an idle stream holds no closure it does not need.
  private onCallerAbort: (() => void) | undefined;
  private readonly onFinish: (call: Call) => void;

  constructor(
    context: ErrorContext,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    onFinish: (call: Call) => void,
  ) {
    this.context = context;
    this.callerSignal = signal;
    this.timeoutMs = timeoutMs;
    this.onFinish = onFinish;
    if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw invalidArgument('timeoutMs', timeoutMs, 'must be a positive number of milliseconds');
    }
    if (signal?.aborted) {
      this.abort('cancelled');
      return;
    }
    if (signal !== undefined) {
      this.onCallerAbort = () => this.abort('cancelled');
      signal.addEventListener('abort', this.onCallerAbort, { once: true });
    }
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
      this.timer = setTimeout(() => this.abort('deadline'), timeoutMs);
    }
  }

  /** Whether the call was aborted (by the caller, its deadline or `close()`). */
  get aborted(): boolean {
    return this.reason !== undefined;
  }

  /** Runs `hook` when the call is aborted (at once if it already was); one hook per call. */
  onAbort(hook: () => void): void {
    this.abortHook = hook;
    if (this.reason !== undefined) hook();
  }

  abort(reason: AbortReason): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.abortHook?.();
  }

  /** Throws the cancellation or deadline error once the call was aborted. */
  throwIfAborted(): void {
    if (this.reason !== undefined) throw this.failure(undefined);
  }

  /**
   * The error for something an engine reported: our own abort says why it happened; an engine's
   * own error says what it could not read; anything else is the network failing (refused
   * connection, reset, a body cut short).
   */
  failure(err: unknown): TritonLlmError {
    if (err instanceof TritonLlmError) return err;
    const { what } = this.context;
    const fields = {
      ...(this.context.requestId !== undefined && this.context.requestId !== ''
        ? { requestId: this.context.requestId }
        : {}),
      ...(this.context.model !== undefined ? { model: this.context.model } : {}),
      ...(err !== undefined ? { cause: err } : {}),
    };
    switch (this.reason) {
      case 'cancelled':
        return new TritonLlmError('cancelled', `${what} was cancelled by the caller`, fields);
      case 'deadline':
        return new TritonLlmError(
          'deadline_exceeded',
          // Whole milliseconds, as gRPC's: what is left of a deadline after an earlier step is fractional.
          `${what} did not finish within its ${Math.ceil(this.timeoutMs ?? 0)} ms deadline`,
          fields,
        );
      case 'closed':
        return new TritonLlmError('unavailable', `${what} was aborted: the transport was closed`, {
          ...fields,
          retryable: false,
        });
      default: {
        // An HTTP/2 answer: an HTTP/2-only server, such as Triton's gRPC port. Only then: any
        // other answer that is not HTTP/1.1 says what is wrong with it, on every engine (issue 55).
        if (err instanceof NotHttp1Response) return notHttpEndpoint(this.context, err);
        if (err instanceof ChunkTooLarge) {
          return tooLarge(this.context, err.limit, `a chunk announced as ${err.size} bytes`);
        }
        if (err instanceof MalformedResponse) {
          return protocolError(`the response is not valid HTTP/1.1: ${err.message}`, this.context, err);
        }
        const parser = undiciParserError(err);
        if (parser !== undefined) {
          if (parser.http2) return notHttpEndpoint(this.context, err);
          return protocolError(`the response is not valid HTTP/1.1: ${parser.reason}`, this.context, err);
        }
        const tls = tlsFailure(err);
        // A certificate the client refuses (or a server refusing ours) fails the same way again.
        if (tls !== undefined) {
          return new TritonLlmError(
            'unavailable',
            `${what}: TLS handshake failed (${tls}); check the CA, client certificate and key the fetch uses`,
            { ...fields, retryable: false },
          );
        }
        return new TritonLlmError('unavailable', `${what} failed: ${networkMessage(err)}`, fields);
      }
    }
  }

  /** Releases the timer and the listener on the caller's signal; idempotent. */
  finish(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.onCallerAbort !== undefined) this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
    this.onFinish(this);
  }
}

// OpenSSL and Node codes of a TLS verification failure, anywhere in the cause chain.
const TLS_CODE = /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|HOSTNAME_MISMATCH)/;

function tlsFailure(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && TLS_CODE.test(code)) return code;
    current = current.cause;
  }
  return undefined;
}

/**
 * undici's refusal of an answer that is not HTTP/1.1 (its llhttp parser's `HPE_*` codes, or its
 * head-size limit), anywhere in the cause chain: what is wrong, and whether the bytes it choked on
 * were an HTTP/2 server's. fetch wraps it in "fetch failed" or "terminated".
 */
function undiciParserError(err: unknown): { reason: string; http2: boolean } | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const { code, data } = current as { code?: unknown; data?: unknown };
    if (code === 'UND_ERR_HEADERS_OVERFLOW')
      return { reason: 'the response head is too large', http2: false };
    // undici 6 reads a body framed two ways by its Content-Length and then finds it short.
    if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') return { reason: current.message, http2: false };
    // undici 6 (Node 20, 22) sets `code` to llhttp's HPE_* name; undici 7 (Node 24, 26) leaves it
    // undefined, so the error's name says it there.
    const parser = typeof code === 'string' ? code.startsWith('HPE_') : current.name === 'HTTPParserError';
    if (parser) {
      // "Response does not match the HTTP/1.1 protocol (Invalid character in chunk size)": the
      // parenthesis says what; `data` holds the bytes from where the parser stopped.
      const what = /\((.+)\)$/.exec(current.message)?.[1] ?? current.message;
      if (typeof data !== 'string') return { reason: what, http2: false };
      const start = Array.from(data.slice(0, 9), (c) => c.charCodeAt(0));
      return {
        reason: `${what} at ${JSON.stringify(data.slice(0, 40))}`,
        http2: (code === undefined || code === 'HPE_INVALID_CONSTANT') && isHttp2Start(start) === true,
      };
    }
    current = current.cause;
  }
  return undefined;
}

// Node's fetch says only "fetch failed" and keeps the useful part (ECONNREFUSED...) in `cause`.
function networkMessage(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 3 && current instanceof Error; depth++) {
    parts.push(current.message);
    current = current.cause;
  }
  return parts.length === 0 ? 'network error' : `network error: ${parts.join(': ')}`;
}
