import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TritonLlmError } from '../src/errors.js';
import {
  bfloat16BitsToFloat32,
  float16BitsToFloat32,
  float32ToBfloat16Bits,
  float32ToFloat16Bits,
} from '../src/tensors/half-float.js';

interface Format {
  readonly name: string;
  readonly toBits: (x: number) => number;
  readonly fromBits: (b: number) => number;
  readonly infinityBits: number;
  /** 2^(emax + 1): where the value after the largest finite one would be. */
  readonly beyondMax: number;
}

const formats: readonly Format[] = [
  {
    name: 'FP16',
    toBits: float32ToFloat16Bits,
    fromBits: float16BitsToFloat32,
    infinityBits: 0x7c00,
    beyondMax: 2 ** 16,
  },
  {
    name: 'BF16',
    toBits: float32ToBfloat16Bits,
    fromBits: bfloat16BitsToFloat32,
    infinityBits: 0x7f80,
    beyondMax: 2 ** 128,
  },
];

describe('FP16 known values (IEEE 754 binary16 tables)', () => {
  it.each([
    [1, 0x3c00],
    [-2, 0xc000],
    [0.5, 0x3800],
    [65504, 0x7bff],
    [2 ** -14, 0x0400],
    [2 ** -24, 0x0001],
    [1023 * 2 ** -24, 0x03ff],
    [0, 0x0000],
    [-0, 0x8000],
    [Number.POSITIVE_INFINITY, 0x7c00],
    [Number.NEGATIVE_INFINITY, 0xfc00],
  ])('%d <-> bits %i', (value, bits) => {
    expect(float32ToFloat16Bits(value)).toBe(bits);
    expect(Object.is(float16BitsToFloat32(bits), value)).toBe(true);
  });

  it.each([
    [1 / 3, 0x3555],
    [0.1, 0x2e66],
    [65519, 0x7bff],
    [65520, 0x7c00], // the tie between 65504 and 2^16 goes to the even side: infinity
    [1e10, 0x7c00],
    [2 ** -25, 0x0000], // tie between 0 and the smallest subnormal goes to 0
    [1.5 * 2 ** -25, 0x0001],
    [-(2 ** -26), 0x8000],
    [1 + 2 ** -11, 0x3c00], // tie between 1 and 1 + 2^-10 goes to even 1
    [1 + 3 * 2 ** -11, 0x3c02],
    [2 ** -14 - 2 ** -25, 0x0400], // the largest subnormal rounds up into the smallest normal
  ])('rounds %d to bits %i', (value, bits) => {
    expect(float32ToFloat16Bits(value)).toBe(bits);
  });

  it('encodes NaN as the quiet NaN 0x7e00 and decodes every NaN pattern to NaN', () => {
    expect(float32ToFloat16Bits(Number.NaN)).toBe(0x7e00);
    expect(float16BitsToFloat32(0x7e00)).toBeNaN();
    expect(float16BitsToFloat32(0x7c01)).toBeNaN();
    expect(float16BitsToFloat32(0xffff)).toBeNaN();
  });
});

describe('BF16 known values', () => {
  it.each([
    [1, 0x3f80],
    [-2, 0xc000],
    [Math.PI, 0x4049],
    [3.3895313892515355e38, 0x7f7f],
    [2 ** -126, 0x0080],
    [2 ** -133, 0x0001],
    [-0, 0x8000],
    [Number.POSITIVE_INFINITY, 0x7f80],
    [Number.NEGATIVE_INFINITY, 0xff80],
    [1 + 2 ** -8, 0x3f80],
    [1 + 3 * 2 ** -8, 0x3f82],
  ])('%d -> bits %i', (value, bits) => {
    expect(float32ToBfloat16Bits(value)).toBe(bits);
  });

  it('encodes NaN as 0x7fc0', () => {
    expect(float32ToBfloat16Bits(Number.NaN)).toBe(0x7fc0);
    expect(bfloat16BitsToFloat32(0x7fc1)).toBeNaN();
  });

  it('decodes to the binary32 whose top half is the pattern', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff }), (bits) => {
        const value = bfloat16BitsToFloat32(bits);
        fc.pre(!Number.isNaN(value));
        const word = new Uint32Array(new Float32Array([value]).buffer)[0]!;
        expect(word >>> 16).toBe(bits);
        expect(word & 0xffff).toBe(0);
      }),
    );
  });
});

describe.each(formats)('$name', ({ toBits, fromBits, infinityBits, beyondMax }) => {
  it('round-trips every non-NaN bit pattern exactly', () => {
    const mismatches: number[] = [];
    for (let bits = 0; bits <= 0xffff; bits++) {
      const value = fromBits(bits);
      const ok = Number.isNaN(value) ? Number.isNaN(fromBits(toBits(value))) : toBits(value) === bits;
      if (!ok) mismatches.push(bits);
    }
    expect(mismatches).toEqual([]);
  });

  it('rounds to the nearer neighbour, ties to the even pattern, overflow to infinity', () => {
    const lowPattern = fc.integer({ min: 0, max: infinityBits - 1 });
    const position = fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(0.5));
    fc.assert(
      fc.property(lowPattern, position, fc.boolean(), (low, t, negative) => {
        const lo = fromBits(low);
        const hi = low + 1 === infinityBits ? beyondMax : fromBits(low + 1);
        const x = lo + (hi - lo) * t;
        fc.pre(x >= lo && x <= hi);
        const below = x - lo;
        const above = hi - x;
        const expected = below < above ? low : below > above ? low + 1 : low % 2 === 0 ? low : low + 1;
        expect(toBits(negative ? -x : x)).toBe(negative ? expected | 0x8000 : expected);
      }),
    );
  });

  it.each([65536, -1, 1.5, Number.NaN])('refuses the bit pattern %d', (bits) => {
    const err = (() => {
      try {
        fromBits(bits);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expect((err as TritonLlmError).message).toContain('bits');
  });
});
