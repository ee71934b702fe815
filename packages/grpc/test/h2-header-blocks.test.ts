import { describe, expect, it } from 'vitest';
import { H2Violation } from '../src/h2/errors.js';
import { HeaderBlocks } from '../src/h2/header-blocks.js';

/** A literal field without indexing (RFC 7541, 6.2.2) with a new name, no Huffman. */
function literal(name: string, value: string): Buffer {
  const n = Buffer.from(name, 'latin1');
  const v = Buffer.from(value, 'latin1');
  if (n.length > 126 || v.length > 126) throw new Error('keep the test fields short');
  return Buffer.concat([Buffer.of(0, n.length), n, Buffer.of(v.length), v]);
}

describe('HeaderBlocks', () => {
  it('gathers a block over CONTINUATION frames and decodes it once whole', () => {
    const blocks = new HeaderBlocks(1024, 4096);
    const block = Buffer.concat([literal(':status', '200'), literal('grpc-status', '0'), literal('x', 'a')]);
    expect(blocks.begin(1, true, false, block.subarray(0, 5))).toBeUndefined();
    expect(blocks.open).toBe(true);
    expect(blocks.continue(1, false, block.subarray(5, 9))).toBeUndefined();
    expect(blocks.continue(1, true, block.subarray(9))).toEqual({
      streamId: 1,
      endStream: true,
      headers: { ':status': '200', 'grpc-status': '0', x: 'a' },
    });
    expect(blocks.open).toBe(false);
  });

  it('refuses a block continued past the limit as it arrives, not once it ends', () => {
    const blocks = new HeaderBlocks(1024, 4096);
    blocks.begin(1, false, false, Buffer.alloc(600, 0x40));
    let error: unknown;
    try {
      blocks.continue(1, false, Buffer.alloc(600, 0x40));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(H2Violation);
    expect((error as H2Violation).errorCode).toBe('resource_exhausted');
    expect((error as H2Violation).message).toContain('larger than the 1024 bytes we allow');
  });

  it('refuses a CONTINUATION frame of another stream', () => {
    const blocks = new HeaderBlocks(1024, 4096);
    blocks.begin(1, false, false, literal('a', 'b'));
    expect(() => blocks.continue(3, true, literal('c', 'd'))).toThrow(
      /unexpected CONTINUATION frame on stream 3/,
    );
  });

  it('joins a repeated field with ", " and names a block that cannot be decoded', () => {
    const blocks = new HeaderBlocks(1024, 4096);
    expect(
      blocks.begin(1, false, true, Buffer.concat([literal('v', '1'), literal('v', '2')]))?.headers,
    ).toEqual({
      v: '1, 2',
    });
    // Index 0 is not a field (RFC 7541, 6.1).
    expect(() => blocks.begin(3, false, true, Buffer.of(0x80))).toThrow(/cannot be decoded \(HPACK: index 0/);
  });
});
