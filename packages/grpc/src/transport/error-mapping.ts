import { Code, ConnectError } from '@connectrpc/connect';
import { TritonLlmError } from '@trtllm/sdk';
import { callerAbortError, codeFromGrpcStatus, codeFromServerError } from '@trtllm/sdk/transport';
import { isOwnLimitError } from '../call/index.js';

/** What the failing call was, so the error can say it. */
export interface ErrorContext {
  /** The RPC name, e.g. `ModelInfer`. */
  readonly method: string;
  readonly model?: string;
  readonly requestId?: string;
  /** The caller's own signal: when it fired, the failure is the caller's cancellation. */
  readonly signal?: AbortSignal | undefined;
}

// Node error codes of a connection that could not be made or was lost.
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_INVALID_SESSION',
]);

// OpenSSL and Node TLS verification failures: the peer is reachable, but retrying cannot help.
const TLS_CODE = /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|HOSTNAME_MISMATCH)/;

// Messages connect-es gives to answers it could not read as gRPC.
const PROTOCOL_MESSAGE =
  /^(parse binary|protocol error|unsupported content type|unsupported response encoding|received compressed envelope|invalid envelope|unexpected end flag|invalid grpc-status)/;

/**
 * Turns whatever a gRPC call threw into a {@link TritonLlmError}: the gRPC status of a server
 * answer keeps its code and verbatim message, failures to connect become `unavailable`, answers
 * that are not valid gRPC or protobuf become `protocol`, and an abort by the caller's own signal
 * becomes `cancelled`. Messages never contain request header values.
 */
export function toTritonLlmError(err: unknown, context: ErrorContext): TritonLlmError {
  const ids = {
    ...(context.model !== undefined ? { model: context.model } : {}),
    ...(context.requestId !== undefined ? { requestId: context.requestId } : {}),
  };
  if (err instanceof TritonLlmError) return err.withContext(ids);
  const where = context.model !== undefined ? `${context.method} '${context.model}'` : context.method;
  if (context.signal?.aborted === true)
    return callerAbortError(context.signal, where, { ...ids, cause: err });
  const ce = ConnectError.from(err);
  if (ce.isWireError && !PROTOCOL_MESSAGE.test(ce.rawMessage)) {
    // One code per cause on every transport (Triton answers an unknown model with UNAVAILABLE in several versions).
    const code = codeFromServerError(ce.rawMessage, codeFromGrpcStatus(ce.code));
    return new TritonLlmError(code, `${where} failed: ${ce.rawMessage || code}`, {
      ...ids,
      serverMessage: ce.rawMessage,
      grpcStatus: ce.code,
      cause: err,
    });
  }
  const nodeCodes = nodeErrorCodes(err);
  const tls = nodeCodes.find((c) => TLS_CODE.test(c));
  if (tls !== undefined) {
    return new TritonLlmError(
      'unavailable',
      `${where}: TLS handshake failed (${tls}); check tls.ca, tls.cert, tls.key and tls.serverName`,
      { ...ids, retryable: false, cause: err },
    );
  }
  if (nodeCodes.some((c) => CONNECTION_CODES.has(c))) {
    return new TritonLlmError('unavailable', `${where}: connection failed (${rootMessage(err)})`, {
      ...ids,
      cause: err,
    });
  }
  if (PROTOCOL_MESSAGE.test(ce.rawMessage)) {
    return new TritonLlmError('protocol', `${where}: unreadable answer from the server (${ce.rawMessage})`, {
      ...ids,
      cause: err,
    });
  }
  if (ce.code === Code.Canceled) {
    // The caller did not cancel, so the connection went away under the call: a server that
    // refused the client certificate after the TLS 1.3 handshake, a restart, or close().
    return new TritonLlmError(
      'unavailable',
      `${where}: the connection was closed under the call (${ce.rawMessage})`,
      { ...ids, cause: err },
    );
  }
  const code = codeFromGrpcStatus(ce.code);
  return new TritonLlmError(code, `${where} failed: ${ce.rawMessage || code}`, {
    ...ids,
    // Over this client's own message limit: another attempt gets the same message, over it again.
    ...(isOwnLimitError(err) ? { retryable: false } : {}),
    cause: err,
  });
}

function nodeErrorCodes(err: unknown): string[] {
  const codes: string[] = [];
  const seen = new Set<unknown>();
  for (let e: unknown = err; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

function rootMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error && e.cause !== e) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

/**
 * The error a `ModelStreamInferResponse.error_message` stands for. The server's text is kept
 * verbatim in `serverMessage`; the code is `not_found` for an unknown model, `invalid_argument`
 * for bad inputs, `internal` otherwise.
 */
export function streamErrorFromMessage(
  message: string,
  context: { model: string; requestId: string },
): TritonLlmError {
  // An in-stream `error_message` carries no status code, only Triton's text.
  const code = codeFromServerError(message);
  return new TritonLlmError(code, `ModelStreamInfer '${context.model}' failed: ${message}`, {
    serverMessage: message,
    model: context.model,
    requestId: context.requestId,
  });
}
