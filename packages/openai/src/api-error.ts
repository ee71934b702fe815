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

const SNAKE_PATH = /^[a-z_]+(?:\[\d+\])?(?:\.[a-z_]+(?:\[\d+\])?)*$/;
const PARAM_LEAD = /^([a-z_]+(?:\[\d+\])?(?:\.[a-z_]+(?:\[\d+\])?)*): /;

/**
 * Validation messages start with the field they are about (`temperature: must be ...`); OpenAI
 * clients show that field as `param`. SDK option names (camelCase) are not OpenAI params, so
 * only snake_case paths are taken.
 */
function paramOf(err: TritonLlmError): string | null {
  if (err.code !== 'invalid_argument') return null;
  if (err.field !== undefined && SNAKE_PATH.test(err.field)) return err.field;
  const match = PARAM_LEAD.exec(err.message);
  return match?.[1] ?? null;
}

// The SDK step an error passed through, as the SDK words it: a gRPC method (`ModelConfig 'x'`) or
// a Triton HTTP call (`GET /v2/models/x/config failed with HTTP 404`). A client of this server
// never made those calls.
const SDK_STEP = /^(?:[A-Z][A-Za-z]+(?: '[^']*')?|(?:GET|POST) \/v2\S*)(?: failed(?: with HTTP \d+)?)?: /;

/**
 * An error as the caller of this server reads it: led by the request they sent
 * (`POST /v1/chat/completions failed: ...`), not by the SDK calls made for it (`schema on 'x'
 * failed: ModelConfig 'x' failed: ...`), which stay in `cause`. Errors about a request parameter
 * already lead with it, as OpenAI's do, and are kept.
 */
export function inRequestTerms(err: unknown, request: string): TritonLlmError {
  const e = TritonLlmError.from(err, 'internal');
  if (e.operation === undefined || paramOf(e) !== null) return e;
  let detail: string;
  if (e.serverMessage !== undefined) detail = `Triton answered: ${e.serverMessage}`;
  else {
    const on = e.model === undefined ? '' : ` on '${e.model}'`;
    const lead = `${e.operation}${on} failed: `;
    detail = (e.message.startsWith(lead) ? e.message.slice(lead.length) : e.message).replace(SDK_STEP, '');
    if (e.code === 'unavailable' || e.code === 'deadline_exceeded')
      detail = `Triton did not answer: ${detail}`;
  }
  return new TritonLlmError(e.code, `${request} failed: ${detail}`, {
    retryable: e.retryable,
    ...(e.serverMessage !== undefined ? { serverMessage: e.serverMessage } : {}),
    ...(e.requestId !== undefined ? { requestId: e.requestId } : {}),
    ...(e.model !== undefined ? { model: e.model } : {}),
    cause: e,
  });
}

/**
 * What went wrong with Triton, without the SDK calls it passed through: the server's own words
 * (`Triton answered: ...`) or what kept it from answering (`Triton did not answer: ...`).
 */
export function tritonDetail(e: TritonLlmError): string {
  if (e.serverMessage !== undefined) return `Triton answered: ${e.serverMessage}`;
  const on = e.model === undefined ? '' : ` on '${e.model}'`;
  const lead = `${e.operation}${on} failed: `;
  const detail = (e.message.startsWith(lead) ? e.message.slice(lead.length) : e.message).replace(
    SDK_STEP,
    '',
  );
  return e.code === 'unavailable' || e.code === 'deadline_exceeded'
    ? `Triton did not answer: ${detail}`
    : detail;
}

/** An error as the HTTP status and OpenAI error JSON a client receives. */
export function toOpenAiError(err: unknown): { status: number; body: OpenAiErrorBody } {
  const e = TritonLlmError.from(err, 'internal');
  const status = STATUS[e.code];
  // OpenAI's answer to a model it does not serve: 404, `model_not_found`, no param.
  if (e.code === 'not_found' && e.field === 'model') {
    return {
      status,
      body: { error: { message: e.message, type: errorType(status), param: null, code: 'model_not_found' } },
    };
  }
  return {
    status,
    body: { error: { message: e.message, type: errorType(status), param: paramOf(e), code: e.code } },
  };
}
