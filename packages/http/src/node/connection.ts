import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** Where a connection is, from the transport's base URL. */
export interface Origin {
  readonly tls: boolean;
  readonly hostname: string;
  readonly port: number;
  /** The Host header: the URL's host, port included when it is not the default. */
  readonly host: string;
  /** The base URL's path (a proxy prefix such as `/triton`), without a trailing slash. */
  readonly prefix: string;
}

export function originOf(baseUrl: string): Origin {
  const url = new URL(baseUrl);
  const tls = url.protocol === 'https:';
  return {
    tls,
    // An IPv6 literal keeps its brackets in the URL but not in a socket address.
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (tls ? 443 : 80) : Number(url.port),
    host: url.host,
    prefix: url.pathname === '/' ? '' : url.pathname,
  };
}

/** Who reads a connection: the request it carries, or the pool while it is idle. */
export interface ConnectionOwner {
  /** Bytes that arrived; a view valid only during the call (the read buffer is reused). */
  onBytes(bytes: Buffer): void;
  /** The connection closed; `error` says why when it failed. */
  onClose(error: Error | undefined): void;
}

// One read buffer for every plain connection: a read is parsed, and what is kept copied, before
// the next read lands. This spares the stream machinery and a Buffer per read.
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** One keep-alive HTTP/1.1 connection, read by whichever owner holds it. */
export class Connection {
  readonly socket: Socket;
  /** Undefined while idle in the pool. */
  owner: ConnectionOwner | undefined;
  /** It carried a request before this one. */
  reused = false;
  closed = false;
  /** Idle connections are closed at this time (ms since the epoch). */
  idleUntil = 0;
  private error: Error | undefined;

  constructor(origin: Origin) {
    const deliver = (bytes: Buffer): void => {
      // Nothing was asked on an idle connection: bytes there are a server's error, so drop it.
      if (this.owner === undefined) this.socket.destroy();
      else this.owner.onBytes(bytes);
    };
    if (origin.tls) {
      this.socket = tlsConnect({
        host: origin.hostname,
        port: origin.port,
        ALPNProtocols: ['http/1.1'],
        ...(/^[\d.]+$|:/.test(origin.hostname) ? {} : { servername: origin.hostname }),
      });
      this.socket.on('data', deliver);
    } else {
      this.socket = netConnect({
        host: origin.hostname,
        port: origin.port,
        onread: {
          buffer: READ_BUFFER,
          callback: (n: number, buffer: Uint8Array) => {
            deliver((buffer as Buffer).subarray(0, n));
            return true;
          },
        },
      });
    }
    this.socket.setNoDelay(true);
    this.socket.on('error', (err) => {
      this.error = err;
    });
    this.socket.on('close', () => {
      this.closed = true;
      const owner = this.owner;
      this.owner = undefined;
      owner?.onClose(this.error);
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}

// Below the five seconds of Node's http server and the longer timeouts of most proxies: a
// connection the server is about to close is not picked for a new request.
const IDLE_MS = 4000;
const SWEEP_MS = 1000;

/**
 * The idle keep-alive connections to one origin: the most recently used is reused first, and
 * idle ones close after a few seconds. Idle connections do not keep the process alive.
 */
export class ConnectionPool {
  private idle: Connection[] = [];
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(private readonly origin: Origin) {}

  acquire(): Connection {
    for (let c = this.idle.pop(); c !== undefined; c = this.idle.pop()) {
      if (c.closed) continue;
      c.socket.ref();
      c.reused = true;
      return c;
    }
    return this.connect();
  }

  /** A new connection, never one from the pool. */
  connect(): Connection {
    return new Connection(this.origin);
  }

  /** Takes back a connection whose response was read to its end; `idleMs` from the server's hint. */
  release(connection: Connection, idleMs = IDLE_MS): void {
    if (this.closed || connection.closed || idleMs <= 0) {
      connection.destroy();
      return;
    }
    connection.owner = undefined;
    connection.idleUntil = Date.now() + Math.min(idleMs, IDLE_MS);
    connection.socket.unref();
    this.idle.push(connection);
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
      this.sweeper.unref();
    }
  }

  close(): void {
    this.closed = true;
    for (const c of this.idle) c.destroy();
    this.idle = [];
    this.stopSweeping();
  }

  private sweep(): void {
    const now = Date.now();
    this.idle = this.idle.filter((c) => {
      if (c.closed) return false;
      if (c.idleUntil > now) return true;
      c.destroy();
      return false;
    });
    if (this.idle.length === 0) this.stopSweeping();
  }

  private stopSweeping(): void {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}
