import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HpackDecoder } from '../src/h2/hpack.js';

// Differential tests: Node's own HTTP/2 server (nghttp2's HPACK encoder, with its dynamic table and
// Huffman coding) answers requests on one connection; a bare client reads the header blocks off the
// wire and our decoder must return exactly the fields the server was told to send.

type Field = [string, string];

/** What the server answers next: response headers and trailers, each as the fields it sends in order. */
interface Answer {
  status: number;
  headers: Field[];
  trailers: Field[];
  /** Names the server sends as never-indexed (RFC 7541 6.2.3). */
  sensitive: string[];
}

let server: http2.Http2Server;
let port: number;
const answers = new Map<string, Answer>();
const serverErrors: string[] = [];
/** What the fuzz exercised, so a generator change cannot quietly make it trivial. */
const seen = { continuations: 0, sizeUpdates: 0, indexedBlocks: 0, largestTable: 0 };

// Node's respond() takes sendDate (no automatic `date` field, so the fields are exactly ours); its
// type declarations leave it out.
const respondOptions = { waitForTrailers: true, sendDate: false } as http2.ServerStreamResponseOptions;

beforeAll(async () => {
  server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const answer = answers.get(String(headers[':path']));
    if (answer === undefined) {
      stream.respond({ ':status': 404 }, { endStream: true });
      return;
    }
    // Node refusing a header set is a fault of this test's generators: say which instead of hanging.
    const refuse = (error: unknown) => {
      serverErrors.push(`${headers[':path']}: ${String(error)}`);
      stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    };
    stream.on('error', refuse);
    stream.on('wantTrailers', () => {
      try {
        stream.sendTrailers(toNodeHeaders(answer.trailers, {}, answer.sensitive));
      } catch (error) {
        refuse(error);
      }
    });
    try {
      stream.respond(
        toNodeHeaders(answer.headers, { ':status': answer.status }, answer.sensitive),
        respondOptions,
      );
      stream.end();
    } catch (error) {
      refuse(error);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Node's header object for `fields`: one key per name, in first-seen order, repeated names as arrays. */
function toNodeHeaders(fields: Field[], first: http2.OutgoingHttpHeaders, sensitive: string[]) {
  const headers: http2.OutgoingHttpHeaders = { ...first };
  for (const [name, value] of fields) {
    const previous = headers[name];
    headers[name] =
      previous === undefined ? value : [...(Array.isArray(previous) ? previous : [String(previous)]), value];
  }
  const present = sensitive.filter((name) => name in headers);
  if (present.length > 0) Object.assign(headers, { [http2.sensitiveHeaders]: present });
  return headers;
}

/** The fields Node sends for `fields`: grouped by name in first-seen order (see toNodeHeaders). */
function sentOrder(fields: Field[]): Field[] {
  const names = [...new Set(fields.map(([name]) => name))];
  return names.flatMap((name) => fields.filter(([n]) => n === name));
}

/** Just enough of an HTTP/2 client to send bare requests and collect the header blocks of the answers. */
class BareClient {
  readonly #socket: net.Socket;
  #buffered = Buffer.alloc(0);
  #block: Buffer[] = [];
  #blocks: { streamId: number; block: Buffer }[] = [];
  #waiters: (() => void)[] = [];
  #failure: Error | undefined;
  #nextStream = 1;

  private constructor(socket: net.Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(new Error('the server closed the connection')));
  }

  static async connect(settings: [number, number][]): Promise<BareClient> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const client = new BareClient(socket);
    const payload = Buffer.alloc(settings.length * 6);
    settings.forEach(([id, value], i) => {
      payload.writeUInt16BE(id, i * 6);
      payload.writeUInt32BE(value, i * 6 + 2);
    });
    socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(0x4, 0, 0, payload)]));
    return client;
  }

  /** Sends a GET for `path` (literal fields, no indexing, so the server's decoder needs no state). */
  request(path: string): number {
    const streamId = this.#nextStream;
    this.#nextStream += 2;
    const fields: Field[] = [
      [':method', 'GET'],
      [':scheme', 'http'],
      [':authority', 'localhost'],
      [':path', path],
    ];
    const block = Buffer.concat(
      fields.flatMap(([name, value]) => [Buffer.of(0), literal(name), literal(value)]),
    );
    this.#socket.write(frame(0x1, 0x1 | 0x4, streamId, block));
    return streamId;
  }

  /** The next complete header block the server sent (HEADERS and its CONTINUATIONs joined). */
  async nextBlock(): Promise<{ streamId: number; block: Buffer }> {
    for (;;) {
      const next = this.#blocks.shift();
      if (next !== undefined) return next;
      if (this.#failure !== undefined) throw this.#failure;
      // A guard against a silent server, so fast-check can report and shrink instead of hanging.
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        timer = setTimeout(
          () => this.#fail(new Error(`no header block in 10 s; server: ${serverErrors.join('; ')}`)),
          10_000,
        );
      });
      clearTimeout(timer);
    }
  }

  close(): void {
    this.#socket.destroy();
  }

  #read(chunk: Buffer): void {
    this.#buffered = Buffer.concat([this.#buffered, chunk]);
    while (this.#buffered.length >= 9) {
      const length = this.#buffered.readUIntBE(0, 3);
      if (this.#buffered.length < 9 + length) break;
      const type = this.#buffered[3] as number;
      const flags = this.#buffered[4] as number;
      const streamId = this.#buffered.readUInt32BE(5) & 0x7fffffff;
      let payload = this.#buffered.subarray(9, 9 + length);
      this.#buffered = this.#buffered.subarray(9 + length);
      if (type === 0x4 && (flags & 0x1) === 0) this.#socket.write(frame(0x4, 0x1, 0, Buffer.alloc(0)));
      if (type === 0x7) this.#fail(new Error(`GOAWAY code ${payload.readUInt32BE(4)}`));
      if (type === 0x3)
        this.#fail(new Error(`RST_STREAM code ${payload.readUInt32BE(0)} on stream ${streamId}`));
      if (type === 0x1) {
        const padding = (flags & 0x8) !== 0 ? (payload[0] as number) : 0;
        payload = payload.subarray((flags & 0x8) !== 0 ? 1 : 0, payload.length - padding);
        if ((flags & 0x20) !== 0) payload = payload.subarray(5);
      }
      if (type === 0x9) seen.continuations++;
      if (type === 0x1 || type === 0x9) {
        this.#block.push(payload);
        if ((flags & 0x4) !== 0) {
          this.#blocks.push({ streamId, block: Buffer.concat(this.#block) });
          this.#block = [];
          this.#wake();
        }
      }
    }
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#wake();
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** A plain string literal with a 7-bit length (our requests' strings are short). */
function literal(text: string): Buffer {
  const octets = Buffer.from(text, 'latin1');
  if (octets.length > 126) throw new Error('literal too long for this test client');
  return Buffer.concat([Buffer.of(octets.length), octets]);
}

const SETTINGS_HEADER_TABLE_SIZE = 0x1;
const SETTINGS_ENABLE_PUSH = 0x2;

/** Answers each request in turn and decodes both blocks, returning them with what was sent. */
async function exchange(
  tableSize: number,
  list: Omit<Answer, 'sensitive'>[],
  sensitive: string[] = [],
  afterEach?: (decoder: HpackDecoder, index: number) => void,
): Promise<{ sent: Field[][]; decoded: Field[][] }> {
  const client = await BareClient.connect([
    [SETTINGS_HEADER_TABLE_SIZE, tableSize],
    [SETTINGS_ENABLE_PUSH, 0],
  ]);
  const decoder = new HpackDecoder({ maxTableSize: tableSize });
  const sent: Field[][] = [];
  const decoded: Field[][] = [];
  const prefix = `/${Math.random().toString(36).slice(2)}/`;
  try {
    for (const [index, answer] of list.entries()) {
      answers.set(`${prefix}${index}`, { ...answer, sensitive });
      const streamId = client.request(`${prefix}${index}`);
      for (const expected of [
        [[':status', String(answer.status)], ...sentOrder(answer.headers)],
        sentOrder(answer.trailers),
      ]) {
        const received = await client.nextBlock();
        expect(received.streamId).toBe(streamId);
        sent.push(expected as Field[]);
        decoded.push(decoder.decode(received.block));
        if (((received.block[0] as number) & 0xe0) === 0x20) seen.sizeUpdates++;
        // Fields sent as references only: every octet of the block is an indexed field.
        if (received.block.every((octet) => octet >= 0x80) && expected.length > 1) seen.indexedBlocks++;
        seen.largestTable = Math.max(seen.largestTable, decoder.tableSize);
      }
      afterEach?.(decoder, index);
    }
  } finally {
    client.close();
    for (const index of list.keys()) answers.delete(`${prefix}${index}`);
  }
  return { sent, decoded };
}

const latin1 = (octets: number[]) => String.fromCharCode(...octets);
const utf8AsLatin1 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

// Field values Node passes through as octets: no NUL, CR or LF (nghttp2 frames them, HTTP forbids them).
const valueOctet = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }),
  fc.integer({ min: 0x80, max: 0xff }),
  fc.constant(0x09),
);
const value = fc.oneof(
  { arbitrary: fc.constantFrom('0', '1', 'application/grpc', 'identity,gzip', ''), weight: 3 },
  {
    arbitrary: fc.string({
      maxLength: 40,
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    }),
    weight: 3,
  },
  { arbitrary: fc.array(valueOctet, { maxLength: 60 }).map(latin1), weight: 2 },
  {
    arbitrary: fc
      .string({ maxLength: 30, unit: 'grapheme' })
      .map(utf8AsLatin1)
      .map((text) => text.replace(/[\0\r\n]/g, '.')),
    weight: 2,
  },
  // Long values force evictions, and blocks past 16 KiB arrive in CONTINUATION frames.
  {
    arbitrary: fc
      .tuple(fc.integer({ min: 200, max: 3000 }), valueOctet)
      .map(([n, c]) => latin1([c]).repeat(n)),
    weight: 1,
  },
);
const name = fc.oneof(
  fc.constantFrom('grpc-status', 'grpc-message', 'x-request-id', 'x-trace', 'triton-model', 'x-a', 'x-b'),
  fc.stringMatching(/^x-[a-z0-9-]{1,24}$/),
);
const fields = (max: number) => fc.array(fc.tuple(name, value), { maxLength: max });
const answer = fc.record({
  // Not 204: Node ends such a stream with its headers, so it would send no trailers.
  status: fc.constantFrom(200, 206, 299, 404, 500),
  headers: fields(8),
  trailers: fc
    .tuple(fc.tuple(fc.constant('grpc-status'), fc.constantFrom('0', '13', '14')), fields(4))
    .map(([status, rest]) => [status, ...rest]),
});

/**
 * The dynamic table nghttp2's encoder keeps (RFC 7541 4.4, sizes in octets of what was sent), under
 * its policy for the fields these tests send: a field already in a table goes by index; a
 * never-indexed field or an entry over 3/4 of the table is not added; any other field is added.
 */
class EncoderTableModel {
  entries: Field[] = [];

  constructor(
    readonly capacity: number,
    readonly sensitive: string[] = [],
  ) {}

  get size(): number {
    return this.entries.reduce((sum, field) => sum + octets(field), 0);
  }

  send(fields: Field[]): void {
    for (const field of fields) {
      const [name, value] = field;
      if (name === ':status' && ['200', '204', '206', '304', '400', '404', '500'].includes(value)) continue;
      if (this.entries.some(([n, v]) => n === name && v === value)) continue;
      if (this.sensitive.includes(name) || octets(field) > (this.capacity * 3) / 4) continue;
      while (this.size + octets(field) > this.capacity) this.entries.pop();
      this.entries.unshift(field);
    }
  }
}

const octets = ([name, value]: Field) =>
  Buffer.byteLength(name, 'latin1') + Buffer.byteLength(value, 'latin1') + 32;

describe("HPACK decoding of node:http2's encoder", () => {
  it('decodes random answers on one connection exactly as sent, at table sizes 0, 256, 4096 and 65536', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(0, 256, 4096, 65536),
        fc.array(answer, { minLength: 5, maxLength: 30 }),
        fc.subarray(['x-trace', 'x-a', 'grpc-message']),
        async (tableSize, list, sensitive) => {
          // nghttp2's encoder uses at most 4096 octets whatever we allow.
          const model = new EncoderTableModel(Math.min(tableSize, 4096), sensitive);
          const { sent, decoded } = await exchange(tableSize, list, sensitive, (decoder, index) => {
            const answer = list[index] as Omit<Answer, 'sensitive'>;
            model.send([
              [':status', String(answer.status)],
              ...sentOrder(answer.headers),
              ...sentOrder(answer.trailers),
            ]);
            expect(decoder.dynamicTable(), `after answer ${index}`).toEqual(model.entries);
            expect(decoder.tableSize, `after answer ${index}`).toBe(model.size);
          });
          expect(decoded).toEqual(sent);
        },
      ),
      {
        seed: Number(process.env.HPACK_FUZZ_SEED ?? 2707),
        numRuns: Number(process.env.HPACK_FUZZ_RUNS ?? 24),
      },
    );
  }, 120_000);

  it('keeps the dynamic table size in octets: latin1 0x80-0xff and UTF-8 values evict what the encoder evicts', async () => {
    const high = latin1(Array.from({ length: 128 }, (_, i) => 0x80 + i));
    const accented = utf8AsLatin1('h\u00e9llo w\u00f6rld \u2713 \u{1f600}');
    // 2000 octets each, but 1000 UTF-16 units once read as UTF-8: counted in units, both would fit
    // beside the older entries; counted in octets (RFC 7541 4.1), the second evicts them.
    const big1 = utf8AsLatin1('\u00e9'.repeat(1000));
    const big2 = utf8AsLatin1('\u00fc'.repeat(1000));
    const ok: Field = ['grpc-status', '0'];
    const list: Omit<Answer, 'sensitive'>[] = [
      {
        status: 200,
        headers: [
          ['x-high', high],
          ['x-accented', accented],
        ],
        trailers: [ok],
      },
      {
        status: 200,
        headers: [
          ['x-high', high],
          ['x-accented', accented],
        ],
        trailers: [ok],
      },
      { status: 200, headers: [['x-big', big1]], trailers: [ok, ['x-big', big2]] },
      {
        status: 200,
        headers: [
          ['x-accented', accented],
          ['x-high', high],
        ],
        trailers: [ok, ['x-after', accented]],
      },
    ];
    // The table nghttp2 keeps, by RFC 7541 4.4 with octet sizes: it indexes every field here the
    // first time it sends it (none has its value in the static table, none exceeds 3/4 of the
    // table), and refers to it by index while it stays in the table.
    const model = new EncoderTableModel(4096);
    const { sent, decoded } = await exchange(4096, list, [], (decoder, index) => {
      const answer = list[index] as Omit<Answer, 'sensitive'>;
      model.send([...answer.headers, ...answer.trailers]);
      expect(decoder.tableSize, `after answer ${index}`).toBe(model.size);
      expect(decoder.dynamicTable(), `after answer ${index}`).toEqual(model.entries);
    });
    expect(decoded).toEqual(sent);
    // The first x-big was evicted by octet count; the rest came back as new entries.
    expect(model.entries.map(([n]) => n)).toEqual([
      'x-after',
      'grpc-status',
      'x-high',
      'x-accented',
      'x-big',
    ]);
    expect(model.entries[4]).toEqual(['x-big', big2]);
    expect(Buffer.from(decoded[0]?.[1]?.[1] ?? '', 'latin1')).toEqual(Buffer.from(high, 'latin1'));
  });
});
