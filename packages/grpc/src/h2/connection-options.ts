import type { ConnectionOptions } from 'node:tls';
import { DEFAULT_MAX_FRAME, DEFAULT_WINDOW } from './frames.js';
import type { H2Stream } from './stream.js';

// What we advertise, and so what bounds the memory a peer can make us hold:
// - frames up to the protocol's minimum size (a larger one is refused on its 9-byte header);
export const MAX_FRAME_IN = DEFAULT_MAX_FRAME;
// - each stream may run 64 KiB ahead of its reader (HTTP/2's default, as with node:http2), so a
//   paused stream holds the server back; windows are topped up once half is used;
export const STREAM_WINDOW = DEFAULT_WINDOW;
export const STREAM_UPDATE_AT = STREAM_WINDOW >>> 1;
// - the connection window only bounds the sum of the stream windows, which bound memory already:
//   it is opened wide once and topped up as data arrives;
export const CONNECTION_UPDATE_AT = 1 << 30;
// - a header block (compressed while it arrives, and decoded) of at most 64 KiB: Triton's are a
//   few hundred bytes; grpc-message of a long error fits many times over;
export const MAX_HEADER_LIST = 64 * 1024;
// - the HPACK table of our decoder: the protocol's default, so nothing needs to be sent for it.
export const HEADER_TABLE = 4096;
// Until the peer's SETTINGS say otherwise (see H2ConnectionOptions.assumedMaxStreams).
export const ASSUMED_MAX_STREAMS = 100;
// Control frames we answer (PING and SETTINGS acknowledgements) while the peer reads nothing back
// pile up in the socket: past this, the peer is flooding us.
export const MAX_UNSENT_BYTES = 16 * 1024 * 1024;
// A refused stream starts again at most this often before the refusal is the caller's to see.
export const MAX_RESTARTS = 8;
// How long a refused stream waits when no other stream of its connection can end first.
export const REFUSED_RETRY_MS = 10;

/** Where and how to connect. */
export interface H2ConnectionOptions {
  readonly url: URL;
  /** Options of `tls.connect` for an `https://` URL (certificates, server name). */
  readonly tls?: ConnectionOptions;
  /** PING after this long without a frame from the peer while streams are open, in ms; 0 for none. */
  readonly keepaliveMs: number;
  /** How long a PING may go unanswered before the connection is given up, in milliseconds. */
  readonly keepaliveTimeoutMs: number;
  /**
   * Streams started before the server's SETTINGS say how many it takes: what an earlier
   * connection to the endpoint learned, else 100, as grpc clients assume (a burst on a fresh
   * connection stays under common limits: HAProxy 100, nginx 128, instead of being refused).
   */
  readonly assumedMaxStreams?: number;
}

/** What a connection (of type `Connection`: the pool's handle on it) tells the pool that owns it. */
export interface H2ConnectionEvents<Connection> {
  /** The connection closed: it takes no streams and is forgotten. */
  gone(connection: Connection): void;
  /** Streams the server never processed (past a GOAWAY's last stream id): start them elsewhere. */
  unprocessed(streams: H2Stream[]): void;
  /**
   * Streams that waited here for the server's SETTINGS and found no room under its
   * MAX_CONCURRENT_STREAMS: the pool may start them on another connection.
   */
  overflow(streams: H2Stream[]): void;
  /** GOAWAY ENHANCE_YOUR_CALM "too_many_pings": our PINGs came faster than the server allows. */
  tooManyPings(): void;
  /** A stream was refused (it waits to start again): for the stats. */
  refused(): void;
  /** The peer's first SETTINGS came: it speaks HTTP/2. */
  ready(connection: Connection): void;
}
