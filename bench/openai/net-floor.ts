/**
 * node-floor.ts with node:http taken out, for `pnpm bench:openai`: HTTP/1.1 read and written by hand
 * on node:net (the request's head found by its blank line, its body by content-length; the answer
 * in chunked encoding, each round's events and their framing one socket write). Everything else is
 * the same exchange. The distance from node-floor.ts to this is what node:http costs per chunk;
 * from this to openai_trtllm, what Node and the least JavaScript cost. A measuring instrument,
 * not a server: no limits, no validation, no error answers.
 *
 * Usage: node --import tsx bench/openai/net-floor.ts --triton <triton gRPC URL>; prints the address it serves.
 */
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { announce, type CompletionBody, floorAnswer } from './floor.js';

const answer = floorAnswer('net-floor.ts');

const HEAD =
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\n' +
  'connection: keep-alive\r\ntransfer-encoding: chunked\r\n\r\n';

/** One HTTP/1.1 chunk; its size counts bytes, not UTF-16 units. */
function chunk(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
}

function respond(socket: Socket, body: CompletionBody): void {
  // The status line and headers leave with the first events, as node:http sends them.
  let head = HEAD;
  answer(body, {
    write: (text) => {
      socket.write(head + chunk(text));
      head = '';
    },
    end: (text) => {
      socket.write(`${head}${chunk(text)}0\r\n\r\n`);
    },
    fail: () => socket.destroy(),
  });
}

const server = createServer((socket) => {
  let buffered: Buffer = Buffer.alloc(0);
  socket.on('data', (data: Buffer) => {
    buffered = buffered.length === 0 ? data : Buffer.concat([buffered, data]);
    // Requests one after another on a keep-alive connection, as the load generator sends them.
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.toString('latin1', 0, end);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      const bodyEnd = end + 4 + length;
      if (buffered.length < bodyEnd) return;
      const body = JSON.parse(buffered.toString('utf8', end + 4, bodyEnd)) as CompletionBody;
      buffered = buffered.subarray(bodyEnd);
      respond(socket, body);
    }
  });
  socket.on('error', () => socket.destroy());
});

server.listen(0, '127.0.0.1', () => announce('net floor', (server.address() as AddressInfo).port));
