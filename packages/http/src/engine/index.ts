/**
 * What every engine offers the layers above it, and nothing more: one request out, its answer's
 * head and body bytes back through a {@link ResponseHandler}, pause, resume and abort. An engine
 * speaks bytes and headers; the event stream, Triton's errors and core's types live above it. Like
 * undici's `DispatchHandler`, this is the only shape an engine's answer takes, so another engine
 * (fetch, Node's sockets, a test double) swaps in here without touching the protocol above.
 */

/** One request as an engine sends it: headers merged and checked above, the framing the engine's own. */
export interface EngineRequest {
  readonly method: 'GET' | 'POST';
  /** The path below the engine's base URL, e.g. `/v2/models/m/generate_stream`. */
  readonly path: string;
  /**
   * The request's headers. The same object for every request of the same kind without headers of
   * the call's own, so an engine may keep what it derives from them (see the Node engine's heads).
   */
  readonly headers: Headers;
  readonly body?: Uint8Array<ArrayBuffer> | string;
  /**
   * A chunk of a chunked body announced larger than this is refused with {@link ChunkTooLarge}
   * before any of its bytes are read, where the engine sees the framing (fetch does not).
   */
  readonly maxChunkBytes?: number;
}

/** Status line and headers of an answer. */
export interface ResponseHead {
  readonly status: number;
  /** A header's value by lower-case name (repeated ones joined by `, `); absent: null or undefined. */
  readonly headers: { get(name: string): string | null | undefined };
}

/**
 * Where an engine hands one answer. Body bytes come as a range of a buffer that is valid only
 * during the call (an engine may reuse its read buffer): a range rather than a view, which would
 * cost an object per read. After `onEnd` or `onError` nothing more arrives.
 */
export interface ResponseHandler {
  onHead(head: ResponseHead): void;
  onBody(bytes: Uint8Array, from: number, to: number): void;
  /** The body ended where its framing says it does. */
  onEnd(): void;
  /**
   * The exchange failed: a {@link MalformedResponse}, or the runtime's own network error (refused,
   * reset, TLS). Never called after {@link Exchange.abort}.
   */
  onError(error: unknown): void;
}

/** One request in flight. */
export interface Exchange {
  /** Stop reading the body until {@link resume} (backpressure: the consumer is behind). */
  pause(): void;
  resume(): void;
  /** Closes the connection unless the answer was read to its end: how HTTP cancels a request. */
  abort(): void;
}

/** Text of body bytes, for engines whose runtime decodes natively (Node's `Buffer`). */
export interface BodyText {
  /** One character per byte of `bytes[from, to)`. */
  latin1(bytes: Uint8Array, from: number, to: number): string;
  /** `bytes[from, to)` decoded as UTF-8. */
  utf8(bytes: Uint8Array, from: number, to: number): string;
}

/** Carries requests to one origin (the base URL given when it was made). */
export interface HttpEngine {
  request(request: EngineRequest, handler: ResponseHandler): Exchange;
  /** Closes idle connections; requests in flight are aborted by their callers. */
  close(): void;
  /**
   * The engine's native text of body bytes, when it has one: readers above then take Triton's
   * one-line events from the bytes without decoding them first.
   */
  readonly text?: BodyText;
  /**
   * Each body range lies in a buffer of its own that the engine never writes again (a web
   * stream's chunks), so a handler may keep it instead of copying it.
   */
  readonly ownBuffers?: boolean;
}

/** An answer that is not HTTP as the engine speaks it; the connection cannot be trusted after it. */
export class MalformedResponse extends Error {}

/**
 * The peer answered HTTP/2 (its first bytes are an HTTP/2 SETTINGS frame): an HTTP/2-only server,
 * such as Triton's gRPC port. Any other answer that is not HTTP/1.x is a plain {@link MalformedResponse}.
 */
export class NotHttp1Response extends MalformedResponse {}

/** A chunk announced larger than the request's {@link EngineRequest.maxChunkBytes}. */
export class ChunkTooLarge extends Error {
  constructor(
    /** The size the chunk's size line announced. */
    readonly size: number,
    readonly limit: number,
  ) {
    super(`the server announced a chunk of ${size} bytes, more than the ${limit} allowed`);
  }
}

/**
 * Whether bytes that are not an HTTP/1.x status line are the start of an HTTP/2 server's answer:
 * the SETTINGS frame every HTTP/2 server sends first (RFC 9113, 3.4), on stream 0, its length a
 * multiple of 6. Undefined while fewer than its 9 header bytes arrived and they may still be one.
 */
export function isHttp2Start(bytes: ArrayLike<number>): boolean | undefined {
  if (bytes.length > 3 && bytes[3] !== 0x04) return false;
  if (bytes.length < 9) return undefined;
  const length = ((bytes[0] as number) << 16) | ((bytes[1] as number) << 8) | (bytes[2] as number);
  const streamZero = bytes[5] === 0 && bytes[6] === 0 && bytes[7] === 0 && bytes[8] === 0;
  return streamZero && length % 6 === 0 && ((bytes[4] as number) & ~0x01) === 0;
}
