import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HpackDecoder, HpackError, HpackListTooLargeError } from '../src/h2/hpack.js';
import { HUFFMAN_CODE_LENGTHS, HUFFMAN_CODES } from '../src/h2/huffman.js';

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex');

type Pairs = [string, string][];

/** One example of RFC 7541 Appendix C: a block, its header list, the table after it (newest first). */
interface Example {
  name: string;
  block: string;
  headers: Pairs;
  table: Pairs;
  tableSize: number;
}

const authority: [string, string] = [':authority', 'www.example.com'];
const noCache: [string, string] = ['cache-control', 'no-cache'];
const custom: [string, string] = ['custom-key', 'custom-value'];
const requests = (blocks: [string, string, string]): Example[] => [
  {
    name: 'first request',
    block: blocks[0],
    headers: [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], authority],
    table: [authority],
    tableSize: 57,
  },
  {
    name: 'second request',
    block: blocks[1],
    headers: [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], authority, noCache],
    table: [noCache, authority],
    tableSize: 110,
  },
  {
    name: 'third request',
    block: blocks[2],
    headers: [[':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], authority, custom],
    table: [custom, noCache, authority],
    tableSize: 164,
  },
];

const date21: [string, string] = ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'];
const date22: [string, string] = ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'];
const location: [string, string] = ['location', 'https://www.example.com'];
const privateCache: [string, string] = ['cache-control', 'private'];
const gzip: [string, string] = ['content-encoding', 'gzip'];
const cookie: [string, string] = ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'];
const responses = (blocks: [string, string, string]): Example[] => [
  {
    name: 'first response',
    block: blocks[0],
    headers: [[':status', '302'], privateCache, date21, location],
    table: [location, date21, privateCache, [':status', '302']],
    tableSize: 222,
  },
  {
    name: 'second response (evicts :status 302)',
    block: blocks[1],
    headers: [[':status', '307'], privateCache, date21, location],
    table: [[':status', '307'], location, date21, privateCache],
    tableSize: 222,
  },
  {
    name: 'third response (evicts several)',
    block: blocks[2],
    headers: [[':status', '200'], privateCache, date22, location, gzip, cookie],
    table: [cookie, gzip, date22],
    tableSize: 215,
  },
];

const appendixC: [string, number, Example[]][] = [
  [
    'C.3 requests without Huffman',
    4096,
    requests([
      '828684410f7777772e6578616d706c652e636f6d',
      '828684be58086e6f2d6361636865',
      '828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565',
    ]),
  ],
  [
    'C.4 requests with Huffman',
    4096,
    requests([
      '828684418cf1e3c2e5f23a6ba0ab90f4ff',
      '828684be5886a8eb10649cbf',
      '828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf',
    ]),
  ],
  [
    'C.5 responses without Huffman, table size 256',
    256,
    responses([
      '4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d',
      '4803333037c1c0bf',
      '88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b2076657273696f6e3d31',
    ]),
  ],
  [
    'C.6 responses with Huffman, table size 256',
    256,
    responses([
      '488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3',
      '4883640effc1c0bf',
      '88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007',
    ]),
  ],
];

describe('RFC 7541 Appendix C', () => {
  it.each([
    [
      'C.2.1 literal with indexing',
      '400a637573746f6d2d6b65790d637573746f6d2d686561646572',
      ['custom-key', 'custom-header'],
      55,
    ],
    ['C.2.2 literal without indexing', '040c2f73616d706c652f70617468', [':path', '/sample/path'], 0],
    ['C.2.3 literal never indexed', '100870617373776f726406736563726574', ['password', 'secret'], 0],
    ['C.2.4 indexed field', '82', [':method', 'GET'], 0],
  ] as const)('%s', (_, block, field, tableSize) => {
    const decoder = new HpackDecoder();
    expect(decoder.decode(hex(block))).toEqual([field]);
    expect(decoder.tableSize).toBe(tableSize);
    expect(decoder.dynamicTable()).toEqual(tableSize === 0 ? [] : [field]);
  });

  describe.each(appendixC)('%s', (_, maxTableSize, examples) => {
    it('decodes each block in turn, with the header lists and tables the RFC lists', () => {
      // The responses assume SETTINGS_HEADER_TABLE_SIZE 256. After that setting RFC 7541 4.2 has the
      // encoder open with a size update, which the examples leave out; a block of just that comes first.
      const decoder = new HpackDecoder({ maxTableSize });
      if (maxTableSize === 256) expect(decoder.decode(Uint8Array.of(0x3f, 0xe1, 0x01))).toEqual([]);
      for (const example of examples) {
        expect(decoder.decode(hex(example.block)), example.name).toEqual(example.headers);
        expect(decoder.dynamicTable(), example.name).toEqual(example.table);
        expect(decoder.tableSize, example.name).toBe(example.tableSize);
      }
    });
  });

  it('C.1 integers: 10 and 1337 with 5-bit prefixes, read as table size updates', () => {
    const decoder = new HpackDecoder();
    const addA = Uint8Array.of(0x40, 0x01, 0x61, 0x00); // 'a: ' is a 33-octet entry
    decoder.decode(Uint8Array.of(0x20 | 0x0a, ...addA));
    expect(decoder.tableSize, 'a table of 10 octets holds nothing').toBe(0);
    decoder.decode(Uint8Array.of(0x3f, 0x9a, 0x0a, ...addA));
    expect(decoder.tableSize, 'a table of 1337 octets holds it').toBe(33);
  });
});

describe('Huffman code', () => {
  it('has the codes RFC 7541 Appendix B prints for a few symbols', () => {
    const code = (symbol: number) => [HUFFMAN_CODES[symbol], HUFFMAN_CODE_LENGTHS[symbol]];
    expect(code(0)).toEqual([0x1ff8, 13]);
    expect(code(' '.charCodeAt(0))).toEqual([0x14, 6]);
    expect(code('0'.charCodeAt(0))).toEqual([0x0, 5]);
    expect(code('a'.charCodeAt(0))).toEqual([0x3, 5]);
    expect(code('A'.charCodeAt(0))).toEqual([0x21, 6]);
    expect(code(255)).toEqual([0x3ffffee, 26]);
    expect(code(256)).toEqual([0x3fffffff, 30]);
  });

  it('is complete (Kraft sum 1), so every bit string is a code, a prefix or EOS', () => {
    const sum = HUFFMAN_CODE_LENGTHS.reduce((total, length) => total + 2 ** (30 - length), 0);
    expect(sum).toBe(2 ** 30);
  });

  it('decodes every octet alone, padded with ones', () => {
    const decoder = new HpackDecoder();
    for (let symbol = 0; symbol < 256; symbol++) {
      const bits = (HUFFMAN_CODES[symbol] as number)
        .toString(2)
        .padStart(HUFFMAN_CODE_LENGTHS[symbol] as number, '0');
      const padded = bits.padEnd(Math.ceil(bits.length / 8) * 8, '1');
      const octets = (padded.match(/.{8}/g) ?? []).map((octet) => Number.parseInt(octet, 2));
      const block = Uint8Array.of(0x00, 0x01, 0x78, 0x80 | octets.length, ...octets);
      expect(decoder.decode(block)).toEqual([['x', String.fromCharCode(symbol)]]);
    }
  });
});

/** An indexed field representation (RFC 7541 6.1) of `index`, with its 7-bit prefix integer. */
function indexed(index: number): number[] {
  if (index < 127) return [0x80 | index];
  const octets = [0xff];
  let rest = index - 127;
  for (; rest >= 128; rest = Math.floor(rest / 128)) octets.push(0x80 | (rest % 128));
  octets.push(rest);
  return octets;
}

/** A literal field without indexing, name 'x', whose value is Huffman-coded `octets`. */
const huffmanValue = (...octets: number[]) =>
  Uint8Array.of(0x00, 0x01, 0x78, 0x80 | octets.length, ...octets);

describe('violations throw HpackError', () => {
  const cases: [string, () => unknown, RegExp][] = [
    [
      'table size update after a field',
      () => new HpackDecoder().decode(Uint8Array.of(0x82, 0x20)),
      /after the first field/,
    ],
    [
      'three table size updates',
      () => new HpackDecoder().decode(Uint8Array.of(0x20, 0x20, 0x20, 0x82)),
      /more than two/,
    ],
    [
      'table size update above the advertised limit',
      () => new HpackDecoder({ maxTableSize: 4096 }).decode(Uint8Array.of(0x3f, 0xe2, 0x1f)),
      /update to 4097 is above the 4096/,
    ],
    [
      'table size update to 2^32',
      () => new HpackDecoder().decode(Uint8Array.of(0x3f, 0xe1, 0xff, 0xff, 0xff, 0x0f)),
      /integer larger than 2147483647/,
    ],
    ['indexed field 0', () => new HpackDecoder().decode(Uint8Array.of(0x80)), /index 0/],
    [
      'index past the empty dynamic table',
      () => new HpackDecoder().decode(Uint8Array.of(0xbe)),
      /index 62 is not in the table/,
    ],
    [
      'literal name index past the tables',
      () => new HpackDecoder().decode(Uint8Array.of(0x7f, 0x08, 0x00)),
      /index 71 is not in the table/,
    ],
    [
      'integer truncated after its prefix',
      () => new HpackDecoder().decode(Uint8Array.of(0xff)),
      /past the end/,
    ],
    [
      'integer truncated in its continuation',
      () => new HpackDecoder().decode(Uint8Array.of(0xff, 0x80)),
      /past the end/,
    ],
    [
      'integer with endless zero continuations',
      () => new HpackDecoder().decode(Uint8Array.of(0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00)),
      /integer larger/,
    ],
    [
      'literal without its name',
      () => new HpackDecoder().decode(Uint8Array.of(0x40)),
      /string literal missing/,
    ],
    [
      'literal without its value',
      () => new HpackDecoder().decode(Uint8Array.of(0x04)),
      /string literal missing/,
    ],
    [
      'string longer than the block',
      () => new HpackDecoder().decode(Uint8Array.of(0x40, 0x05, 0x61)),
      /5 octets runs past the end of the block \(1 left\)/,
    ],
    ['Huffman EOS in a value', () => new HpackDecoder().decode(huffmanValue(0xff, 0xff, 0xff, 0xff)), /EOS/],
    ['Huffman padding of zeros', () => new HpackDecoder().decode(huffmanValue(0x00)), /not all ones/],
    ['Huffman string cut inside a code', () => new HpackDecoder().decode(huffmanValue(0xfe)), /not all ones/],
    ['Huffman padding of 8 ones', () => new HpackDecoder().decode(huffmanValue(0xff)), /longer than 7 bits/],
    [
      "Huffman 'a' then 11 ones of padding",
      () => new HpackDecoder().decode(huffmanValue(0b0001_1111, 0xff)),
      /longer than 7 bits/,
    ],
    [
      'a first block without the update a smaller advertised table needs',
      () => new HpackDecoder({ maxTableSize: 0 }).decode(Uint8Array.of(0x82)),
      /must open with a table size update/,
    ],
  ];
  it.each(cases)('%s', (_, decode, message) => {
    expect(decode).toThrow(HpackError);
    expect(decode).toThrow(message);
  });

  it('a header list over maxHeaderListSize throws HpackListTooLargeError', () => {
    // ':method: GET' counts 7 + 3 + 32 = 42 octets (RFC 9113 6.5.2).
    const decoder = new HpackDecoder({ maxHeaderListSize: 84 });
    expect(decoder.decode(Uint8Array.of(0x82, 0x82))).toHaveLength(2);
    const decode = () => decoder.decode(Uint8Array.of(0x82, 0x82, 0x82));
    expect(decode).toThrow(HpackListTooLargeError);
    expect(decode).toThrow(/larger than the 84 octets/);
  });
});

describe('valid edge cases', () => {
  it("Huffman 'a' '0' with six ones of padding decodes", () => {
    expect(new HpackDecoder().decode(huffmanValue(0b0001_1000, 0b0011_1111))).toEqual([['x', 'a0']]);
  });

  it('an empty Huffman string and an empty block decode', () => {
    const decoder = new HpackDecoder();
    expect(decoder.decode(Uint8Array.of(0x00, 0x01, 0x78, 0x80))).toEqual([['x', '']]);
    expect(decoder.decode(new Uint8Array(0))).toEqual([]);
  });

  it('two table size updates at the start: to 0 (empties the table), then back', () => {
    const decoder = new HpackDecoder();
    decoder.decode(hex('400a637573746f6d2d6b65790d637573746f6d2d686561646572'));
    expect(decoder.tableSize).toBe(55);
    expect(decoder.decode(Uint8Array.of(0x20, 0x3f, 0xe1, 0x1f, 0x82))).toEqual([[':method', 'GET']]);
    expect(decoder.tableSize).toBe(0);
    expect(() => decoder.decode(Uint8Array.of(0xbe))).toThrow(/index 62/);
  });

  it('an entry larger than the table empties it and is not added', () => {
    const decoder = new HpackDecoder();
    decoder.decode(Uint8Array.of(0x3f, 0x11, 0x82)); // size 48
    decoder.decode(Uint8Array.of(0x40, 0x01, 0x61, 0x01, 0x62)); // 34 octets: fits
    expect(decoder.tableSize).toBe(34);
    const long = 'v'.repeat(20);
    const block = Buffer.concat([Uint8Array.of(0x40, 0x01, 0x63, long.length), Buffer.from(long, 'latin1')]);
    expect(decoder.decode(block)).toEqual([['c', long]]);
    expect(decoder.tableSize).toBe(0);
    expect(decoder.dynamicTable()).toEqual([]);
  });

  it('octets 0x80-0xff come back as latin1 and count one each in the table', () => {
    const decoder = new HpackDecoder();
    const value = Buffer.from([0x80, 0xc3, 0xa9, 0xff]);
    const block = Buffer.concat([Uint8Array.of(0x40, 0x01, 0x78, value.length), value]);
    const [[name, decoded] = ['', '']] = decoder.decode(block);
    expect(name).toBe('x');
    expect(Buffer.from(decoded, 'latin1')).toEqual(value);
    expect(decoder.tableSize).toBe(1 + 4 + 32);
  });

  it('uppercase names come back as sent (RFC 9113 malformedness is the caller\u2019s call)', () => {
    const block = Buffer.concat([
      Uint8Array.of(0x00, 0x03),
      Buffer.from('X-A'),
      Uint8Array.of(0x01),
      Buffer.from('v'),
    ]);
    expect(new HpackDecoder().decode(block)).toEqual([['X-A', 'v']]);
  });

  it('reads a plain Uint8Array view at an offset into a larger buffer, as it reads a Buffer', () => {
    const block = hex('400a637573746f6d2d6b65790d637573746f6d2d686561646572');
    const backing = new Uint8Array(block.length + 7);
    backing.set(block, 5);
    const view = new Uint8Array(backing.buffer, 5, block.length);
    expect(new HpackDecoder().decode(view)).toEqual([['custom-key', 'custom-header']]);
  });

  it('a ring of many small entries keeps its order as it grows and evicts', () => {
    const decoder = new HpackDecoder();
    const names: string[] = [];
    for (let i = 0; i < 300; i++) {
      const name = `n${i}`;
      names.unshift(name);
      decoder.decode(
        Buffer.concat([Uint8Array.of(0x40, name.length), Buffer.from(name), Uint8Array.of(0x00)]),
      );
    }
    // Each entry is 32 + 2..4 octets; 4096 holds the newest ones only.
    const table = decoder.dynamicTable();
    expect(table.map(([name]) => name)).toEqual(names.slice(0, table.length));
    expect(decoder.tableSize).toBe(table.reduce((sum, [name]) => sum + name.length + 32, 0));
    expect(decoder.tableSize).toBeGreaterThan(4096 - 36);
    expect(decoder.decode(Uint8Array.of(0xbe, ...indexed(61 + table.length)))).toEqual([
      [names[0], ''],
      [names[table.length - 1], ''],
    ]);
  });
});

describe('hostile blocks', () => {
  /** Decodes `block`: a header list, or an HpackError; anything else (a TypeError, a hang) fails. */
  const outcome = (decoder: HpackDecoder, block: Uint8Array) => {
    try {
      const fields = decoder.decode(block);
      for (const [name, value] of fields) {
        if (typeof name !== 'string' || typeof value !== 'string')
          throw new Error('a field is not two strings');
      }
      return 'decoded';
    } catch (error) {
      if (error instanceof HpackError) return 'HpackError';
      throw error;
    }
  };
  const warmed = () => {
    const decoder = new HpackDecoder({ maxHeaderListSize: 16_384 });
    for (const example of appendixC[1]?.[2] ?? []) decoder.decode(hex(example.block));
    return decoder;
  };

  it('random octets decode or throw HpackError, on a fresh and on a filled table', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.boolean(), (block, fresh) => {
        expect(['decoded', 'HpackError']).toContain(outcome(fresh ? new HpackDecoder() : warmed(), block));
      }),
      { seed: 27, numRuns: 3000 },
    );
  });

  it('Appendix C blocks with octets changed or cut short decode or throw HpackError', () => {
    const blocks = appendixC.flatMap(([, , examples]) => examples.map((example) => hex(example.block)));
    fc.assert(
      fc.property(
        fc.constantFrom(...blocks),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
        fc.nat(),
        (original, changes, cut) => {
          const block = Buffer.from(original);
          for (const [at, octet] of changes) block[at % block.length] = octet;
          expect(['decoded', 'HpackError']).toContain(
            outcome(warmed(), block.subarray(0, cut % (block.length + 1))),
          );
        },
      ),
      { seed: 27, numRuns: 3000 },
    );
  });
});
