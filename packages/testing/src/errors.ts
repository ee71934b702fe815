/**
 * Triton's error codes (TRITONSERVER_Error_Code) and how its two front ends report them, so a fake
 * error reaches the client with the status the real server would use.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';

export type TritonCode =
  | 'UNKNOWN'
  | 'INTERNAL'
  | 'NOT_FOUND'
  | 'INVALID_ARG'
  | 'UNAVAILABLE'
  | 'UNSUPPORTED'
  | 'ALREADY_EXISTS'
  | 'CANCELLED';

/** An error with Triton's code and message; the message reaches the client verbatim. */
export class TritonError extends Error {
  override readonly name = 'TritonError';
  readonly code: TritonCode;
  /** Set by `statusOnce` faults: the exact statuses to answer with. */
  readonly override: { readonly grpc: number; readonly http: number } | undefined;

  constructor(code: TritonCode, message: string, override?: { grpc: number; http: number }) {
    super(message);
    this.code = code;
    this.override = override;
  }
}

const GRPC: Record<TritonCode, GrpcStatus> = {
  UNKNOWN: GrpcStatus.UNKNOWN,
  INTERNAL: GrpcStatus.INTERNAL,
  NOT_FOUND: GrpcStatus.NOT_FOUND,
  INVALID_ARG: GrpcStatus.INVALID_ARGUMENT,
  UNAVAILABLE: GrpcStatus.UNAVAILABLE,
  UNSUPPORTED: GrpcStatus.UNIMPLEMENTED,
  ALREADY_EXISTS: GrpcStatus.ALREADY_EXISTS,
  CANCELLED: GrpcStatus.CANCELLED,
};

// Triton's HTTP front end (HttpCodeFromError); anything else is a 400.
const HTTP: Partial<Record<TritonCode, number>> = {
  INTERNAL: 500,
  NOT_FOUND: 404,
  UNAVAILABLE: 503,
  UNSUPPORTED: 501,
  ALREADY_EXISTS: 409,
};

export function grpcStatusOf(error: TritonError): number {
  return error.override?.grpc ?? GRPC[error.code];
}

export function httpStatusOf(error: TritonError): number {
  return error.override?.http ?? HTTP[error.code] ?? 400;
}

/** Any thrown value as a TritonError (a bug in the fake surfaces as INTERNAL, not as a hang). */
export function asTritonError(err: unknown): TritonError {
  if (err instanceof TritonError) return err;
  return new TritonError('INTERNAL', err instanceof Error ? err.message : String(err));
}

/** Triton's prefix on core validation messages. */
export function requestPrefix(id: string): string {
  return `[request id: ${id === '' ? '<id_unknown>' : id}] `;
}

/**
 * Triton's statistics of a model it does not have, or of a version it lacks: INVALID_ARG (400 /
 * INVALID_ARGUMENT) with messages of their own, where every other call says NOT_FOUND.
 */
export function statisticsUnavailable(name: string, version: string): TritonError {
  return new TritonError(
    'INVALID_ARG',
    version === ''
      ? `requested model '${name}' is not available`
      : `requested model version is not available for model '${name}'`,
  );
}

/** Triton's answer to a model load or unload without `--model-control-mode=explicit`. */
export function modelControlDisabled(): TritonError {
  return new TritonError('UNAVAILABLE', 'explicit model load / unload is not allowed if polling is enabled');
}

/** Triton's answer for a model that was loaded and is not any more (explicit model control). */
export function unloadedModel(name: string): TritonError {
  return new TritonError('NOT_FOUND', `Request for unknown model: '${name}' has no available versions`);
}

export function unknownModel(name: string, version?: string): TritonError {
  const v = version === undefined || version === '' ? '' : ` version ${version}`;
  return new TritonError('NOT_FOUND', `Request for unknown model: '${name}'${v} is not found`);
}
