import type { EarlyStopReport } from './result.js';

/**
 * The stable error codes of {@link TritonLlmError}: gRPC's status codes in snake_case, plus
 * `protocol` for a server answer the SDK cannot make sense of (malformed protobuf or SSE, a
 * stream that ends without its final response).
 */
export type ErrorCode =
  | 'cancelled'
  | 'unknown'
  | 'invalid_argument'
  | 'deadline_exceeded'
  | 'not_found'
  | 'already_exists'
  | 'permission_denied'
  | 'resource_exhausted'
  | 'failed_precondition'
  | 'aborted'
  | 'out_of_range'
  | 'unimplemented'
  | 'internal'
  | 'unavailable'
  | 'data_loss'
  | 'unauthenticated'
  | 'protocol';

/** All codes, in gRPC's numeric order followed by the SDK's own. */
export const ERROR_CODES: readonly ErrorCode[] = [
  'cancelled',
  'unknown',
  'invalid_argument',
  'deadline_exceeded',
  'not_found',
  'already_exists',
  'permission_denied',
  'resource_exhausted',
  'failed_precondition',
  'aborted',
  'out_of_range',
  'unimplemented',
  'internal',
  'unavailable',
  'data_loss',
  'unauthenticated',
  'protocol',
];

/** gRPC numeric status (1..16) to our code; 0 (OK) has no error code. */
export function codeFromGrpcStatus(status: number): ErrorCode {
  return ERROR_CODES[status - 1] ?? 'unknown';
}

// Triton's error classes as its text and the TensorRT-LLM backend's name them. A gRPC stream's
// `error_message` and an HTTP body or event sent after status 200 carry no code at all, and a
// Python model's failure arrives as INTERNAL / 500 whatever caused it: the text is what both
// transports share, so it decides wherever the status does not say more.
const STATISTICS_OF_MISSING_MODEL = /^requested model (?:'[^']*' |version )is not available/;

const SERVER_TEXT_CODES: ReadonlyArray<readonly [RegExp, ErrorCode]> = [
  [/unknown model|is not found/i, 'not_found'],
  // A model another one calls (a BLS's tensorrt_llm) that is not loaded: the server is not ready for it.
  [/Model '[^']*' is not ready/, 'unavailable'],
  [/generate stream|exactly 1 response|doesn't support models with decoupled/i, 'unimplemented'],
  [/cancel/i, 'cancelled'],
  [/timed out|deadline/i, 'deadline_exceeded'],
  [
    /invalid.argument|expected .*inputs?|missing required input|unexpected (inference )?input|input '[^']*'|datatype|data-type|data type|shape|unable to parse|must be|is not supported|only supported/i,
    'invalid_argument',
  ],
];

/**
 * The code of an error the server reported, the same on every transport: `status` is the code of
 * the gRPC status or HTTP status it came with (none for an in-stream error or a 2xx body). A
 * specific status stands; a generic one (`internal`, `unknown`, none) gives way to the class the
 * message names, and an unknown model answered as `unavailable` is `not_found`, as are the
 * statistics of one (answered as `invalid_argument`).
 */
export function codeFromServerError(message: string, status?: ErrorCode): ErrorCode {
  // Triton answers the statistics of a model or version it lacks with INVALID_ARGUMENT (400).
  if (STATISTICS_OF_MISSING_MODEL.test(message)) return 'not_found';
  const byText = SERVER_TEXT_CODES.find(([re]) => re.test(message))?.[1];
  if (status === undefined) return byText ?? 'internal';
  if (status === 'internal' || status === 'unknown') return byText ?? status;
  if (status === 'unavailable' && byText === 'not_found') return byText;
  return status;
}

/**
 * Codes worth retrying when nothing was delivered yet. `internal` is not among them: Triton
 * answers parse errors with 500 / INTERNAL, and those fail again.
 */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set(['unavailable', 'resource_exhausted', 'aborted']);

/**
 * What a {@link TritonLlmError} knows beyond its code and message. Every field is optional
 * because the layer that throws often knows only part of it; `withContext` fills in the rest
 * on the way up.
 */
export interface TritonLlmErrorOptions {
  /** The server's own message, verbatim, when the error came from the server. */
  readonly serverMessage?: string;
  /** The request id sent on the wire, to find the request in server logs. */
  readonly requestId?: string;
  /** The model the failing call addressed. */
  readonly model?: string;
  /** Overrides the default derived from the code. */
  readonly retryable?: boolean;
  /** HTTP status, when the error came from an HTTP response. */
  readonly httpStatus?: number;
  /** gRPC status code, when the error came from a gRPC status. */
  readonly grpcStatus?: number;
  /** The underlying error (a gRPC or fetch failure), kept as the standard `Error.cause`. */
  readonly cause?: unknown;
  /** When the error ended a request early: whether and how the server was told. */
  readonly earlyStop?: EarlyStopReport;
  /** The input the error is about, as the caller named it (`maxTokens`, `stopWords[2]`). */
  readonly field?: string;
  /** The SDK call the user made that failed (`generate`, `stream`, `infer`, `health`...). */
  readonly operation?: string;
  /** What the address speaks when it is not the transport's protocol (see {@link TritonLlmError.endpointProtocol}). */
  readonly endpointProtocol?: 'grpc' | 'http';
}

// In the global symbol registry, so every copy of the class (the ESM and the CJS build, two
// installed versions) marks its errors with the same key.
const BRAND = Symbol.for('@trtllm/sdk.TritonLlmError');

/**
 * The one error type of the SDK. Every failure, whether bad input caught before any I/O, a
 * gRPC status, an HTTP error body, an error event in the middle of a stream, a timeout or a
 * cancellation, surfaces as a `TritonLlmError` with a stable {@link ErrorCode}.
 *
 * `err instanceof TritonLlmError` holds for the errors of any copy of the SDK: an app that loads
 * it with `import` while a library loads it with `require` gets two classes, and each recognizes
 * the other's errors.
 */
export class TritonLlmError extends Error {
  static {
    Object.defineProperty(TritonLlmError.prototype, BRAND, { value: true });
  }

  /**
   * The brand check behind `instanceof TritonLlmError`. A subclass keeps the ordinary prototype
   * check, so `instanceof` a subclass is true only for errors made by that subclass.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class on the right of instanceof, a subclass too
    if (this !== TritonLlmError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }

  /** Always `'TritonLlmError'`, so logs name the type even after serialization. */
  override readonly name = 'TritonLlmError';
  /** The stable code to branch on; it is the same whichever transport carried the call. */
  readonly code: ErrorCode;
  /**
   * Whether the same call may succeed when tried again: by default true for `unavailable`,
   * `resource_exhausted` and `aborted`, unless the layer that threw knew better.
   */
  readonly retryable: boolean;
  /** The server's own message, verbatim, when the error came from the server. */
  readonly serverMessage: string | undefined;
  /** The request id sent on the wire, to find the request in server logs. */
  readonly requestId: string | undefined;
  /** The model the failing call addressed, when known. */
  readonly model: string | undefined;
  /** HTTP status, when the error came from an HTTP response. */
  readonly httpStatus: number | undefined;
  /** gRPC status code, when the error came from a gRPC status. */
  readonly grpcStatus: number | undefined;
  /** When the error ended a request early: whether and how the server was told to stop. */
  readonly earlyStop: EarlyStopReport | undefined;
  /**
   * The input an `invalid_argument` error is about, as the caller wrote it (`maxTokens`,
   * `stopWords[2]`, `lora.taskId`): the message names it too, for people; this is for code.
   */
  readonly field: string | undefined;
  /**
   * The SDK call the user made that failed (`generate`, `stream`, `infer`, `health`...); the
   * message leads with it (`generate on 'ensemble' failed: ...`).
   */
  readonly operation: string | undefined;
  /**
   * Set when the address answered in the other protocol: `grpc` when an HTTP transport reached an
   * HTTP/2-only server such as Triton's gRPC port (8001), `http` when a gRPC transport reached a
   * server that does not speak gRPC, such as Triton's HTTP port (8000). The message states the fact
   * and the default ports without naming an SDK function, so a front end can add the setting of
   * its own API (`grpcUrl`, `--triton grpc://...`) from this field.
   */
  readonly endpointProtocol: 'grpc' | 'http' | undefined;

  constructor(code: ErrorCode, message: string, options: TritonLlmErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? RETRYABLE.has(code);
    this.serverMessage = options.serverMessage;
    this.requestId = options.requestId;
    this.model = options.model;
    this.httpStatus = options.httpStatus;
    this.grpcStatus = options.grpcStatus;
    this.earlyStop = options.earlyStop;
    this.field = options.field;
    this.operation = options.operation;
    this.endpointProtocol = options.endpointProtocol;
  }

  /** Returns `err` when it already is a `TritonLlmError`, else wraps it with `code`. */
  static from(
    err: unknown,
    code: ErrorCode = 'unknown',
    options: TritonLlmErrorOptions = {},
  ): TritonLlmError {
    if (err instanceof TritonLlmError) return err;
    const message = err instanceof Error ? err.message : String(err);
    return new TritonLlmError(code, message, { ...options, cause: err });
  }

  /**
   * A copy that leads with the user's call: `generate on 'ensemble' failed: <what the layer that
   * threw said>`, the internal step kept as the detail, `operation` set. Errors about an input
   * (`field` set) already lead with it and keep their message. Applied once, by the outermost call.
   */
  forOperation(operation: string, model?: string): TritonLlmError {
    if (this.operation !== undefined) return this;
    const on = (this.model ?? model) === undefined ? '' : ` on '${this.model ?? model}'`;
    const message = this.field !== undefined ? this.message : `${operation}${on} failed: ${this.message}`;
    const copy = new TritonLlmError(this.code, message, {
      ...this.options(),
      operation,
      ...(this.model === undefined && model !== undefined ? { model } : {}),
    });
    if (this.stack !== undefined) copy.stack = this.stack.replace(this.message, message);
    return copy;
  }

  /** A copy with request id, model and early-stop report filled in where the layer that threw did not know them. */
  withContext(context: { requestId?: string; model?: string; earlyStop?: EarlyStopReport }): TritonLlmError {
    const add = {
      ...(this.requestId === undefined && context.requestId !== undefined
        ? { requestId: context.requestId }
        : {}),
      ...(this.model === undefined && context.model !== undefined ? { model: context.model } : {}),
      ...(this.earlyStop === undefined && context.earlyStop !== undefined
        ? { earlyStop: context.earlyStop }
        : {}),
    };
    if (Object.keys(add).length === 0) return this;
    const copy = new TritonLlmError(this.code, this.message, { ...this.options(), ...add });
    if (this.stack !== undefined) copy.stack = this.stack;
    return copy;
  }

  private options(): TritonLlmErrorOptions {
    return {
      retryable: this.retryable,
      ...(this.serverMessage !== undefined ? { serverMessage: this.serverMessage } : {}),
      ...(this.requestId !== undefined ? { requestId: this.requestId } : {}),
      ...(this.model !== undefined ? { model: this.model } : {}),
      ...(this.httpStatus !== undefined ? { httpStatus: this.httpStatus } : {}),
      ...(this.grpcStatus !== undefined ? { grpcStatus: this.grpcStatus } : {}),
      ...(this.cause !== undefined ? { cause: this.cause } : {}),
      ...(this.earlyStop !== undefined ? { earlyStop: this.earlyStop } : {}),
      ...(this.field !== undefined ? { field: this.field } : {}),
      ...(this.operation !== undefined ? { operation: this.operation } : {}),
      ...(this.endpointProtocol !== undefined ? { endpointProtocol: this.endpointProtocol } : {}),
    };
  }
}

/**
 * What a public call of the client rethrows: a `TritonLlmError` led by the call the user made
 * ({@link TritonLlmError.forOperation}); errors of other kinds pass as they are.
 */
export function failedCall(operation: string, model?: string): (err: unknown) => never {
  return (err) => {
    throw err instanceof TritonLlmError ? err.forOperation(operation, model) : err;
  };
}

/**
 * The error for a call the caller's own signal ended: `deadline_exceeded` when the signal was
 * `AbortSignal.timeout()` (the caller's own deadline rather than a change of mind), `cancelled`
 * otherwise. `where` names the call (`ModelInfer 'ensemble'`); every transport words it this way.
 */
export function callerAbortError(
  signal: AbortSignal,
  where: string,
  options: TritonLlmErrorOptions = {},
): TritonLlmError {
  const timedOut = (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError';
  return timedOut
    ? new TritonLlmError('deadline_exceeded', `${where}: the caller's signal timed out`, options)
    : new TritonLlmError('cancelled', `${where} was cancelled by the caller's signal`, options);
}

/** Shorthand for the validation error every bad input gets before anything is sent. */
export function invalidArgument(field: string, value: unknown, why: string): TritonLlmError {
  return new TritonLlmError('invalid_argument', `${field}: ${why} (got ${describe(value)})`, { field });
}

function describe(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (Array.isArray(value) && value.length > 8) return `array of ${value.length}`;
  // Any object, including one without a prototype (Object.create(null)), whose String() throws.
  if (typeof value === 'object' && value !== null) {
    try {
      const s = JSON.stringify(value, bigintJson) ?? Object.prototype.toString.call(value);
      return s.length > 80 ? `${s.slice(0, 77)}...` : s;
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
  return String(value);
}

function bigintJson(_key: string, v: unknown): unknown {
  return typeof v === 'bigint' ? `${v}n` : v;
}
