import { type ErrorCode, TritonLlmError } from '@trtllm/sdk';
import { codeFromServerError } from '@trtllm/sdk/transport';

/** Where an error happened, for its message and fields. */
export interface ErrorContext {
  /** `METHOD /path` of the call, never the query or headers (those may carry secrets). */
  readonly what: string;
  readonly requestId?: string;
  readonly model?: string;
}

// Triton answers some bad input with 500 (e.g. a body that is not JSON); `internal` is not
// retryable, so such a request is never replayed.
const CODE_BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'invalid_argument',
  401: 'unauthenticated',
  403: 'permission_denied',
  404: 'not_found',
  408: 'deadline_exceeded',
  409: 'aborted',
  412: 'failed_precondition',
  413: 'resource_exhausted',
  416: 'out_of_range',
  429: 'resource_exhausted',
  499: 'cancelled',
  500: 'internal',
  501: 'unimplemented',
  502: 'unavailable',
  503: 'unavailable',
  504: 'deadline_exceeded',
};

const MAX_MESSAGE_CHARS = 2000;

/**
 * The one mapping from an HTTP answer to a `TritonLlmError`: a non-2xx status with its body, a
 * 200 `/generate` body holding `{"error": ...}`, or an SSE event `{"error": ...}` (status 200).
 * The server's message is kept verbatim in `serverMessage`.
 */
export function errorFromHttp(status: number, body: string, context: ErrorContext): TritonLlmError {
  const serverMessage = serverMessageOf(body);
  const code = codeOf(status, serverMessage ?? '', context.what);
  const shown = serverMessage ?? 'empty body';
  const message =
    status >= 200 && status < 300
      ? `${context.what} reported an error: ${shown}`
      : `${context.what} failed with HTTP ${status}: ${shown}`;
  return new TritonLlmError(code, message, {
    httpStatus: status,
    ...(serverMessage !== undefined ? { serverMessage } : {}),
    ...(context.requestId !== undefined && context.requestId !== '' ? { requestId: context.requestId } : {}),
    ...(context.model !== undefined ? { model: context.model } : {}),
  });
}

/**
 * A server that does not answer HTTP/1.1 at all: an HTTP/2-only port, such as Triton's gRPC port.
 * Asking again cannot help, so it is not retryable.
 */
export function notHttpEndpoint(context: ErrorContext, cause?: unknown): TritonLlmError {
  return new TritonLlmError(
    'unavailable',
    `${context.what}: the server does not answer HTTP/1.1 (an HTTP/2-only server, such as Triton's gRPC port); ` +
      "this is not Triton's HTTP endpoint (Triton listens for HTTP on 8000 and gRPC on 8001 by default; " +
      'use grpcTransport for gRPC)',
    {
      retryable: false,
      // The fact as data: a front end names its own setting from it instead of grpcTransport (issue 53).
      endpointProtocol: 'grpc',
      ...(context.requestId !== undefined && context.requestId !== ''
        ? { requestId: context.requestId }
        : {}),
      ...(context.model !== undefined ? { model: context.model } : {}),
      ...(cause !== undefined ? { cause } : {}),
    },
  );
}

/** A server answer the transport cannot make sense of. */
export function protocolError(message: string, context: ErrorContext, cause?: unknown): TritonLlmError {
  return new TritonLlmError('protocol', `${context.what}: ${message}`, {
    ...(context.requestId !== undefined && context.requestId !== '' ? { requestId: context.requestId } : {}),
    ...(context.model !== undefined ? { model: context.model } : {}),
    ...(cause !== undefined ? { cause } : {}),
  });
}

function codeOf(status: number, serverMessage: string, what: string): ErrorCode {
  // A 2xx answer that reports an error (a /generate body, an SSE event) has no status to go by, and
  // neither has a 400 from /generate_stream: Triton answers every failure of the model before its
  // first event with 400, a Python model's INTERNAL error too, while gRPC carries the same failure
  // in-stream with no status at all. The text decides on both, so one cause gets one code (issue 53).
  const noStatus = (status >= 200 && status < 300) || (status === 400 && what.endsWith('/generate_stream'));
  return codeFromServerError(serverMessage, noStatus ? undefined : (CODE_BY_STATUS[status] ?? 'unknown'));
}

function serverMessageOf(body: string): string | undefined {
  const text = body.trim();
  if (text === '') return undefined;
  try {
    // Triton 2.51 answers an error before the first event of /generate_stream with status 400
    // and an SSE body, `data: {"error": ...}`, rather than plain JSON.
    const json = text.startsWith('data:') ? text.slice(5).trim() : text;
    const parsed: unknown = JSON.parse(json);
    if (typeof parsed === 'object' && parsed !== null && 'error' in parsed) {
      const error = (parsed as { error: unknown }).error;
      return typeof error === 'string' ? error : JSON.stringify(error);
    }
  } catch {
    // Not JSON (a proxy's HTML page, plain text): keep it, shortened.
  }
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}...` : text;
}
