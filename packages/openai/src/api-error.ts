import { type ErrorCode, TritonLlmError } from '@trtllm/sdk';
import type { OpenAiErrorBody } from './wire.js';

/** The HTTP status OpenAI clients expect for each error code (they pick their error class by status). */
const STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_argument: 400,
  out_of_range: 400,
  // Asking a non-decoupled model to stream is a request the deployment cannot serve, not a crash.
  failed_precondition: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  already_exists: 409,
  resource_exhausted: 429,
  // nginx's "client closed request": nobody reads it, but logs should not call it a server fault.
  cancelled: 499,
  unknown: 500,
  internal: 500,
  data_loss: 500,
  aborted: 500,
  unimplemented: 501,
  protocol: 502,
  unavailable: 503,
  deadline_exceeded: 504,
};

function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/**
 * Validation messages start with the field they are about (`temperature: must be ...`); OpenAI
 * clients show that field as `param`. SDK option names (camelCase) are not OpenAI params, so
 * only snake_case paths are taken.
 */
function paramOf(err: TritonLlmError): string | null {
  if (err.code !== 'invalid_argument') return null;
  const match = /^([a-z_]+(?:\[\d+\])?(?:\.[a-z_]+(?:\[\d+\])?)*): /.exec(err.message);
  return match?.[1] ?? null;
}

/** An error as the HTTP status and OpenAI error JSON a client receives. */
export function toOpenAiError(err: unknown): { status: number; body: OpenAiErrorBody } {
  const e = TritonLlmError.from(err, 'internal');
  const status = STATUS[e.code];
  return {
    status,
    body: { error: { message: e.message, type: errorType(status), param: paramOf(e), code: e.code } },
  };
}
