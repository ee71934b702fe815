import { Code, ConnectError } from '@connectrpc/connect';
// The gRPC spec's table of HTTP statuses (the answer of something that is not a gRPC server).
import { codeFromHttpStatus } from '@connectrpc/connect/protocol-grpc';
import {
  H2_CANCEL,
  H2_ENHANCE_YOUR_CALM,
  H2_HTTP_1_1_REQUIRED,
  H2_INADEQUATE_SECURITY,
  H2_REFUSED_STREAM,
  type H2Headers,
  h2ErrorName,
} from '../h2/index.js';

/**
 * What the headers and trailers of one gRPC call over HTTP/2 said, read as they arrive (the
 * header objects are not kept: an idle stream should cost little).
 */
export class CallStatus {
  /** `grpc-encoding` of the answer's compressed messages. */
  encoding: string | undefined;
  private headerError: ConnectError | undefined;
  private headerHasStatus = false;
  private trailersSeen = false;
  private trailerError: ConnectError | undefined;

  headers(headers: H2Headers): void {
    const encoding = headers['grpc-encoding'];
    if (encoding !== undefined) this.encoding = String(encoding);
    this.headerHasStatus = headers['grpc-status'] !== undefined;
    this.headerError = responseHeaderError(headers);
  }

  trailers(trailers: H2Headers): void {
    this.trailersSeen = true;
    this.trailerError = statusError(trailers);
  }

  /** The answer is not gRPC at all (an HTTP status, a content type): its error, before any status. */
  get notGrpc(): ConnectError | undefined {
    return this.headerHasStatus ? undefined : this.headerError;
  }

  /** The error the call's status stands for: undefined for OK, or when no status came. */
  get error(): ConnectError | undefined {
    return this.trailerError ?? this.headerError;
  }

  /** Whether a `grpc-status` came, in trailers or a trailers-only answer. */
  get statusSeen(): boolean {
    return this.trailersSeen || this.headerHasStatus;
  }
}

/**
 * What the response headers of a gRPC call over HTTP/2 say: the error of an answer that is not
 * gRPC at all (an HTTP status, a content type), else the status of a trailers-only answer.
 */
export function responseHeaderError(headers: H2Headers): ConnectError | undefined {
  const status = Number(headers[':status']);
  const type = String(headers['content-type'] ?? '');
  if (status !== 200) {
    return new ConnectError(
      `the server (or a proxy in front of it) answered HTTP ${status}${type === '' ? '' : ` (${type})`}`,
      codeFromHttpStatus(status),
    );
  }
  if (!type.startsWith('application/grpc'))
    return new ConnectError(`unsupported content type ${type}`, Code.Unknown);
  return statusError(headers);
}

/** The error a `grpc-status` other than OK stands for (undefined for OK or none). */
export function statusError(headers: H2Headers | undefined): ConnectError | undefined {
  const status = headers?.['grpc-status'];
  if (status === undefined || status === '0') return undefined;
  const code = Number.parseInt(String(status), 10);
  const raw = headers?.['grpc-message'];
  let message = '';
  try {
    message = raw === undefined ? '' : decodeURIComponent(String(raw));
  } catch {
    message = String(raw);
  }
  const error =
    code in Code
      ? new ConnectError(message, code as Code)
      : new ConnectError(`invalid grpc-status: ${String(status)}`, Code.Internal);
  // Marks it as the server's answer, as connect-es does for statuses read from trailers.
  (error as { isWireError: boolean }).isWireError = true;
  return error;
}

/** A stream reset by the peer (a server, or a proxy in front of it) before any status arrived. */
export function resetError(rstCode: number): ConnectError {
  const message = `the stream was reset by the server or a proxy in front of it (RST_STREAM ${h2ErrorName(rstCode)})`;
  switch (rstCode) {
    case H2_REFUSED_STREAM:
      return new ConnectError(message, Code.Unavailable);
    case H2_CANCEL:
      return new ConnectError(message, Code.Canceled);
    case H2_ENHANCE_YOUR_CALM:
      return new ConnectError(message, Code.ResourceExhausted);
    case H2_INADEQUATE_SECURITY:
    case H2_HTTP_1_1_REQUIRED:
      return new ConnectError(message, Code.PermissionDenied);
    default:
      return new ConnectError(message, Code.Internal);
  }
}
