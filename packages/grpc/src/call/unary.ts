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
import type { H2Engine } from '../h2/index.js';
import { type CallListener, GrpcCall } from './grpc-call.js';
import { type CallMetadata, grpcTimeout, requestHeaders } from './headers.js';
import { encodeFramed } from './messages.js';

/** What the unary calls share with the streamed ones: the connections and the limits. */
export interface UnaryConfig {
  readonly engine: H2Engine;
  readonly gzip: boolean;
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number | undefined;
}

/**
 * connect-es's `Transport` for the typed client's unary calls (health, metadata, config,
 * statistics, `ModelInfer`), each a {@link GrpcCall} on the streamed calls' engine: the same
 * checked frames, limits, wrong-port messages and connections as the streamed calls.
 */
export function unaryTransport(config: UnaryConfig): ConnectTransport {
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
        const answer = new UnaryAnswer((err, bytes) => {
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
        const call = new GrpcCall(
          {
            engine: config.engine,
            request: config.engine.prepare(path, fields),
            maxReceiveBytes: config.maxReceiveBytes,
            timeoutMs,
          },
          answer,
        );
        answer.call = call;
        const onAbort = () => answer.fail(signal?.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        call.send(body);
        call.halfClose();
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
class UnaryAnswer implements CallListener {
  call: GrpcCall | undefined;
  private answer: Buffer | undefined;
  private done = false;

  constructor(private readonly settle: (err: unknown, message?: Buffer) => void) {}

  message(buf: Buffer, start: number, end: number): boolean {
    if (this.answer !== undefined) {
      this.fail(
        new ConnectError('protocol error: a unary call answered with more than one message', Code.Internal),
      );
      return false;
    }
    // A copy: the view belongs to a socket read that the connection will not keep.
    this.answer = Buffer.from(buf.subarray(start, end));
    return true;
  }

  ended(error: unknown): void {
    if (this.done) return;
    this.done = true;
    if (error !== undefined) this.settle(error);
    else if (this.answer === undefined) {
      this.settle(new ConnectError('protocol error: missing output message for unary method', Code.Internal));
    } else this.settle(undefined, this.answer);
  }

  /** Ends the call from this side (a second message, the caller's signal): resets the stream. */
  fail(err: unknown): void {
    if (this.done) return;
    this.done = true;
    this.call?.cancel();
    this.settle(err);
  }
}
