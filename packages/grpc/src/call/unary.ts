import {
  create,
  type DescMessage,
  type DescMethodUnary,
  fromBinary,
  type MessageInitShape,
  toBinary,
} from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  type Transport as ConnectTransport,
  type UnaryResponse,
} from '@connectrpc/connect';
import { CallStatus, resetError } from './call-status.js';
import { FrameReader, type MessageSink } from './grpc-frames.js';
import { encodeHeaderBlock } from './h2/frames.js';
import type { H2Sessions } from './h2/sessions.js';
import type { H2Headers, H2Stream, H2StreamOwner } from './h2/stream.js';
import { type CallMetadata, grpcTimeout, requestHeaders } from './headers.js';
import { encodeFramed, inflate } from './stream-codec.js';

/** What the unary calls share with the streamed ones: the connections and the limits. */
export interface UnaryConfig {
  readonly sessions: H2Sessions;
  readonly url: URL;
  readonly gzip: boolean;
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number | undefined;
}

/**
 * connect-es's `Transport` for the typed client's unary calls (health, metadata, config,
 * statistics, `ModelInfer`), on the package's own HTTP/2 engine: the same checked frames, limits,
 * wrong-port messages and connections as the streamed calls, where node:http2 waited for the
 * deadline on some broken frames and, on some, aborted the process from inside nghttp2.
 */
export function h2UnaryTransport(config: UnaryConfig): ConnectTransport {
  return {
    unary: <I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeadersInit | undefined,
      input: MessageInitShape<I>,
    ): Promise<UnaryResponse<I, O>> =>
      new Promise((resolve, reject) => {
        if (signal?.aborted === true) {
          reject(signal.reason);
          return;
        }
        const body = encodeFramed(toBinary(method.input, create(method.input, input)), config);
        const fields = requestHeaders(metadataOf(header), config.gzip);
        if (timeoutMs !== undefined) fields['grpc-timeout'] = grpcTimeout(timeoutMs);
        const path = `/${method.parent.typeName}/${method.name}`;
        const call = new UnaryCall(config.maxReceiveBytes, (err, bytes) => {
          if (timer !== undefined) clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          if (err !== undefined) reject(err);
          else {
            try {
              resolve({
                stream: false,
                service: method.parent,
                method,
                // Made only when read (never, by this package's calls): see callHeaders.
                get header() {
                  return new Headers();
                },
                get trailer() {
                  return new Headers();
                },
                message: fromBinary(method.output, bytes!),
              });
            } catch (decodeError) {
              reject(new ConnectError(`protocol error: parse binary: ${String(decodeError)}`, Code.Internal));
            }
          }
        });
        const h2 = config.sessions.open(encodeHeaderBlock(config.url, path, fields), call);
        call.h2 = h2;
        const onAbort = () => call.fail(signal?.reason, true);
        signal?.addEventListener('abort', onAbort, { once: true });
        const timer =
          timeoutMs === undefined
            ? undefined
            : setTimeout(
                () =>
                  call.fail(
                    new ConnectError(`the deadline of ${timeoutMs} ms passed`, Code.DeadlineExceeded),
                    true,
                  ),
                timeoutMs,
              );
        h2.write(body);
        h2.end();
      }),
    stream: () =>
      Promise.reject(new ConnectError('streamed calls do not go through this transport', Code.Unimplemented)),
  };
}

/**
 * A call's metadata without making a `Headers` (see `callHeaders`): the transport passes the
 * plain object `callHeaders` made; an array or a `Headers` is read as such.
 */
function metadataOf(init: HeadersInit | undefined): CallMetadata {
  const out: CallMetadata = Object.create(null);
  if (init === undefined) return out;
  const add = (value: string, name: string) => {
    out[name.toLowerCase()] = value;
  };
  if (Array.isArray(init)) for (const [name, value] of init) add(value, name);
  else if (typeof (init as Headers).forEach === 'function') (init as Headers).forEach(add);
  else for (const [name, value] of Object.entries(init)) add(value, name);
  return out;
}

/** One unary call's answer: one message, then the status in the trailers. */
class UnaryCall implements H2StreamOwner, MessageSink {
  h2: H2Stream | undefined;
  private readonly status = new CallStatus();
  private readonly frames: FrameReader;
  private answer: Buffer | undefined;
  private done = false;

  constructor(
    maxReceiveBytes: number,
    private readonly settle: (err: unknown, message?: Buffer) => void,
  ) {
    this.frames = new FrameReader(maxReceiveBytes);
    this.limit = maxReceiveBytes;
  }

  private readonly limit: number;

  headersArrived(headers: H2Headers): void {
    this.status.headers(headers);
  }

  trailersArrived(trailers: H2Headers): void {
    this.status.trailers(trailers);
  }

  dataArrived(buf: Buffer, start: number, end: number): void {
    if (this.done || this.status.notGrpc !== undefined) return;
    try {
      this.frames.push(buf, start, end, this);
    } catch (err) {
      this.fail(err, true);
    }
  }

  message(buf: Buffer, start: number, end: number, compressed: boolean): boolean {
    if (this.answer !== undefined) {
      this.fail(
        new ConnectError('protocol error: a unary call answered with more than one message', Code.Internal),
        true,
      );
      return false;
    }
    // A copy: the view belongs to a socket read that the connection will not keep.
    const bytes = buf.subarray(start, end);
    this.answer = compressed ? inflate(bytes, this.status.encoding, this.limit) : Buffer.from(bytes);
    return true;
  }

  closed(rstCode: number | undefined): void {
    if (this.done) return;
    const error =
      this.status.notGrpc ??
      this.status.error ??
      (this.status.statusSeen
        ? undefined
        : rstCode !== undefined && rstCode !== 0
          ? resetError(rstCode)
          : undefined);
    if (error !== undefined) this.fail(error, false);
    else if (!this.status.statusSeen) {
      this.fail(new ConnectError('the connection closed before the call ended', Code.Unavailable), false);
    } else if (this.answer === undefined || this.frames.incomplete) {
      this.fail(
        new ConnectError('protocol error: missing output message for unary method', Code.Internal),
        false,
      );
    } else {
      this.done = true;
      this.settle(undefined, this.answer);
    }
  }

  streamFailed(err: unknown): void {
    this.fail(err, false);
  }

  fail(err: unknown, reset: boolean): void {
    if (this.done) return;
    this.done = true;
    if (reset) this.h2?.cancel();
    this.settle(err);
  }
}
