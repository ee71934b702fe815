import { invalidArgument } from '../errors.js';

/**
 * The two 16-bit float formats Triton carries only as raw bytes: FP16 (IEEE 754 binary16) and
 * BF16 (bfloat16, the top half of a binary32). Both are described by their field widths so one
 * rounding routine serves both.
 */
interface HalfFormat {
  readonly mantissaBits: number;
  readonly bias: number;
  readonly maxExponentField: number;
  readonly infinity: number;
  readonly quietNaN: number;
  readonly minNormal: number;
  readonly subnormalStep: number;
  /** Halfway between the largest finite value and the next power of two: from here on, round to infinity. */
  readonly overflow: number;
}

const SIGN = 0x8000;

function halfFormat(exponentBits: number, mantissaBits: number): HalfFormat {
  const bias = 2 ** (exponentBits - 1) - 1;
  const maxExponentField = 2 ** exponentBits - 1;
  const infinity = maxExponentField << mantissaBits;
  return {
    mantissaBits,
    bias,
    maxExponentField,
    infinity,
    quietNaN: infinity | (1 << (mantissaBits - 1)),
    minNormal: 2 ** (1 - bias),
    subnormalStep: 2 ** (1 - bias - mantissaBits),
    overflow: (2 - 2 ** -(mantissaBits + 1)) * 2 ** bias,
  };
}

const FP16 = halfFormat(5, 10);
const BF16 = halfFormat(8, 7);

function roundHalfToEven(v: number): number {
  const floor = Math.floor(v);
  const rest = v - floor;
  if (rest > 0.5) return floor + 1;
  if (rest < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

// Rounds straight from the double: going through binary32 first would round twice and can land
// one unit off when the first rounding produces an exact tie.
function toHalfBits(x: number, f: HalfFormat): number {
  if (Number.isNaN(x)) return f.quietNaN;
  const sign = x < 0 || Object.is(x, -0) ? SIGN : 0;
  const a = Math.abs(x);
  if (a >= f.overflow) return sign | f.infinity;
  // A subnormal that rounds up to 2^mantissaBits lands exactly on the smallest normal's encoding.
  if (a < f.minNormal) return sign | roundHalfToEven(a / f.subnormalStep);
  let exponent = Math.floor(Math.log2(a));
  // Math.log2 may be off by one near powers of two; scaling by a power of two is exact, so check.
  if (2 ** exponent > a) exponent -= 1;
  else if (2 ** (exponent + 1) <= a) exponent += 1;
  const mantissa = roundHalfToEven((a / 2 ** exponent - 1) * 2 ** f.mantissaBits);
  // Adding (not or-ing) lets a mantissa that rounded up to 2^mantissaBits carry into the exponent.
  return sign | (((exponent + f.bias) << f.mantissaBits) + mantissa);
}

function fromHalfBits(bits: number, f: HalfFormat): number {
  const sign = bits & SIGN ? -1 : 1;
  const exponent = (bits & 0x7fff) >> f.mantissaBits;
  const mantissa = bits & ((1 << f.mantissaBits) - 1);
  if (exponent === 0) return sign * mantissa * f.subnormalStep;
  if (exponent === f.maxExponentField) return mantissa === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1 + mantissa / 2 ** f.mantissaBits) * 2 ** (exponent - f.bias);
}

function checkBits(bits: number): void {
  if (!Number.isInteger(bits) || bits < 0 || bits > 0xffff) {
    throw invalidArgument('bits', bits, 'a 16-bit float pattern is an integer in [0, 65535]');
  }
}

/**
 * Rounds a number to the nearest IEEE 754 half-precision value (ties to even) and returns its
 * 16-bit pattern. The number is rounded once, from its full double value; beyond the largest
 * half (65504) it becomes infinity, NaN becomes the quiet NaN `0x7e00`, and -0 keeps its sign.
 */
export function float32ToFloat16Bits(x: number): number {
  return toHalfBits(x, FP16);
}

/** The value of a half-precision bit pattern (0..0xffff), subnormals, infinities and -0 included. */
export function float16BitsToFloat32(bits: number): number {
  checkBits(bits);
  return fromHalfBits(bits, FP16);
}

/**
 * Rounds a number to the nearest bfloat16 value (ties to even) and returns its 16-bit pattern.
 * bfloat16 has binary32's exponent range and 8 significant bits; NaN becomes `0x7fc0`.
 */
export function float32ToBfloat16Bits(x: number): number {
  return toHalfBits(x, BF16);
}

/** The value of a bfloat16 bit pattern (0..0xffff), subnormals, infinities and -0 included. */
export function bfloat16BitsToFloat32(bits: number): number {
  checkBits(bits);
  return fromHalfBits(bits, BF16);
}
