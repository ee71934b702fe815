/**
 * An adversarial HTTP/1.1 server for the reliability tests and `pnpm bench:hostile`: raw bytes on
 * `node:net`, never `node:http` (which refuses to send most of what matters here: both framings at
 * once, a lying chunk size, a second answer nobody asked for). The first request it receives gets
 * the scenario's answer; every later one (on any connection) a short valid event stream whose one
 * event says `ok`, so a test can check that the transport still works after the scenario.
 * Scenarios that flood stop at `capBytes`, or when the client goes away.
 */
import { once } from 'node:events';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { createTensor, type InferRequest } from '@trtllm/sdk';

/** A valid streamed request to `ensemble`: what every client sends the hostile server. */
export const HOSTILE_HTTP1_REQUEST: InferRequest = {
  model: 'ensemble',
  id: 'hostile',
  inputs: [
    createTensor('text_input', 'BYTES', [1, 1], ['What is HTTP/1.1?']),
    createTensor('max_tokens', 'INT32', [1, 1], [16]),
    createTensor('stream', 'BOOL', [1, 1], [true]),
  ],
};

/** The path {@link HOSTILE_HTTP1_REQUEST} is posted to. */
export const HOSTILE_HTTP1_PATH = '/v2/models/ensemble/generate_stream';

/** One valid event, with the text it carries. */
export function event(text: string): string {
  return `data: {"model_name":"ensemble","model_version":"1","text_output":"${text}"}\n\n`;
}

const STREAM_HEAD =
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n';

/** One chunk of chunked transfer coding. */
export function chunk(body: string | Buffer): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);
}

/** The valid answer every request after the first gets. */
export const VALID_ANSWER = `${STREAM_HEAD}${chunk(event('ok')).toString()}0\r\n\r\n`;

const FILL = Buffer.alloc(64 * 1024, 'a');
/** SSE comment events, the smallest there are (`:` and a blank line), 3 bytes each. */
const TINY_EVENTS = 1_000_000;
/** The HTTP/2 server preface: a SETTINGS frame (MAX_CONCURRENT_STREAMS 100) on stream 0, then GOAWAY. */
const HTTP2_ANSWER = Buffer.from([
  0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100, 0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
]);

/** What a scenario may do with the connection of the first request. */
interface Wire {
  readonly socket: Socket;
  /** Writes, waiting while the socket's buffer is full; false once the client left or the cap is hit. */
  write(bytes: string | Buffer): Promise<boolean>;
  /** Writes `bytes` again and again until the client leaves or the cap is hit. */
  flood(bytes: Buffer): Promise<void>;
}

const SCENARIOS = {
  /** A status line, then header lines forever. */
  'endless-headers': async (w: Wire) => {
    await w.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n');
    await w.flood(Buffer.from(`x-filler: ${'h'.repeat(1000)}\r\n`.repeat(64)));
  },
  /** A valid head, then one `data:` line that never ends, 64 KiB per chunk. */
  'endless-line': async (w: Wire) => {
    if (!(await w.write(`${STREAM_HEAD}${chunk('data: ').toString()}`))) return;
    await w.flood(chunk(FILL));
  },
  /** A chunk announced as FFFFFFFFFF (1 TiB) bytes, then a `data:` line filling it forever. */
  'huge-chunk-size': async (w: Wire) => {
    if (!(await w.write(`${STREAM_HEAD}FFFFFFFFFF\r\ndata: `))) return;
    await w.flood(FILL);
  },
  /** A chunk size that is not hex. */
  'garbage-chunk-size': (w: Wire) => w.write(`${STREAM_HEAD}zz\r\n${event('x')}\r\n`),
  /** Content-Length 5, then a whole event (longer), and the connection left open. */
  'short-content-length': (w: Wire) =>
    w.write(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 5\r\n\r\n${event('x')}`),
  /** Content-Length 100000, one event, then close. */
  'long-content-length': async (w: Wire) => {
    await w.write(
      `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 100000\r\n\r\n${event('x')}`,
    );
    w.socket.end();
  },
  /** A chunk of 256 bytes, 10 of them, then close. */
  'close-mid-chunk': async (w: Wire) => {
    await w.write(`${STREAM_HEAD}100\r\ndata: {"mo`);
    w.socket.end();
  },
  /** A million comment events (`:` and a blank line), then an error event. */
  'million-tiny-events': async (w: Wire) => {
    if (!(await w.write(STREAM_HEAD))) return;
    const block = chunk(':\n\n'.repeat(21_000));
    for (let sent = 0; sent < TINY_EVENTS; sent += 21_000) if (!(await w.write(block))) return;
    await w.write(chunk('data: {"error":"hostile: the error after a million tiny events"}\n\n'));
    await w.write('0\r\n\r\n');
  },
  /** Transfer-Encoding chunked and Content-Length together (the request-smuggling shape). */
  'te-and-content-length': (w: Wire) =>
    w.write(
      `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\ncontent-length: 7\r\n\r\n${chunk(event('x')).toString()}0\r\n\r\n`,
    ),
  /** An HTTP/1.0 answer without a length: one event, half of the next, then close. */
  'http10-no-length': async (w: Wire) => {
    await w.write(`HTTP/1.0 200 OK\r\ncontent-type: text/event-stream\r\n\r\n${event('x')}data: {"model_na`);
    w.socket.end();
  },
  /** A valid answer, one byte per second. */
  'one-byte-per-second': async (w: Wire) => {
    for (const byte of Buffer.from(VALID_ANSWER)) {
      if (!(await w.write(Buffer.of(byte)))) return;
      await delay(1000);
    }
  },
  /** A 503 with its body, and in the same write a second answer nobody asked for. */
  'unsolicited-second-response': (w: Wire) => {
    const error = '{"error":"hostile: overloaded"}';
    return w.write(
      `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${error.length}\r\n\r\n${error}` +
        `${STREAM_HEAD}${chunk(event('unsolicited')).toString()}0\r\n\r\n`,
    );
  },
  /** Bytes that are not HTTP at all (another protocol's greeting). */
  'not-http': (w: Wire) => w.write('SSH-2.0-OpenSSH_9.6\r\n'),
  /** An HTTP/2-only server: its SETTINGS frame, then GOAWAY. */
  'http2-server': (w: Wire) => w.write(HTTP2_ANSWER),
} satisfies Record<string, (w: Wire) => Promise<unknown>>;

export type Http1ScenarioName = keyof typeof SCENARIOS;
export const HTTP1_SCENARIO_NAMES = Object.keys(SCENARIOS) as Http1ScenarioName[];

export interface HostileHttp1Server {
  readonly url: string;
  /** Requests received so far. */
  readonly requests: () => number;
  /** Bytes the scenario wrote. */
  readonly bytesSent: () => number;
  close(): Promise<void>;
}

export async function startHostileHttp1Server(
  scenario: Http1ScenarioName,
  options: { capBytes?: number } = {},
): Promise<HostileHttp1Server> {
  const capBytes = options.capBytes ?? 512 * 1024 * 1024;
  const sockets = new Set<Socket>();
  let requests = 0;
  let sent = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const wire: Wire = {
      socket,
      async write(bytes) {
        if (socket.destroyed || !socket.writable || sent >= capBytes) return false;
        sent += bytes.length;
        if (!socket.write(bytes)) {
          // Not events.once: it rejects on the client's reset, and the loser's listener would stay.
          await new Promise<void>((resolve) => {
            const done = (): void => {
              socket.off('drain', done);
              socket.off('close', done);
              resolve();
            };
            socket.on('drain', done);
            socket.on('close', done);
          });
        }
        return !socket.destroyed && socket.writable;
      },
      async flood(bytes) {
        while (await wire.write(bytes)) {
          // until the client leaves or the cap
        }
      },
    };
    let buffered = Buffer.alloc(0);
    let serving = false;
    const serve = (): void => {
      if (serving) return;
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(
        /\r\ncontent-length: *(\d+)/i.exec(buffered.toString('latin1', 0, end))?.[1] ?? 0,
      );
      if (buffered.length < end + 4 + length) return;
      buffered = buffered.subarray(end + 4 + length);
      const first = requests === 0;
      requests += 1;
      if (first) {
        // The scenario owns the connection until it has written everything; then it serves again
        // (a client may keep a connection whose answer ended, even if that answer was an error).
        serving = true;
        void SCENARIOS[scenario](wire).then(() => {
          serving = false;
          serve();
        });
      } else {
        socket.write(VALID_ANSWER);
        serve();
      }
    };
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      serve();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    bytesSent: () => sent,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
