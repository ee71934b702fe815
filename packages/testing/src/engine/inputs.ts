/** Reading model inputs the way the TensorRT-LLM models do: scalars from `[1, 1]`, lists, strings. */
import type { Tensor } from '../tensor.js';

export type Inputs = ReadonlyMap<string, Tensor>;

const utf8 = new TextDecoder('utf-8');

function first(inputs: Inputs, name: string): Tensor['data'][number] | undefined {
  return inputs.get(name)?.data[0];
}

export function intInput(inputs: Inputs, name: string): number | undefined {
  const v = first(inputs, name);
  if (v === undefined || v instanceof Uint8Array) return undefined;
  return typeof v === 'boolean' ? Number(v) : Number(v);
}

export function boolInput(inputs: Inputs, name: string): boolean | undefined {
  const v = first(inputs, name);
  if (v === undefined || v instanceof Uint8Array) return undefined;
  return typeof v === 'boolean' ? v : v !== 0 && v !== 0n;
}

/** A UINT64 scalar, kept exact. */
export function bigintInput(inputs: Inputs, name: string): bigint | undefined {
  const v = first(inputs, name);
  if (v === undefined || v instanceof Uint8Array) return undefined;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  return BigInt(Math.trunc(v));
}

export function intsInput(inputs: Inputs, name: string): number[] | undefined {
  const t = inputs.get(name);
  if (!t) return undefined;
  return (t.data as readonly unknown[]).map((v) => (typeof v === 'number' ? v : Number(v)));
}

export function textsInput(inputs: Inputs, name: string): string[] | undefined {
  const t = inputs.get(name);
  if (t?.datatype !== 'BYTES') return undefined;
  return (t.data as Uint8Array[]).map((b) => utf8.decode(b));
}

/**
 * Word lists of the raw model (`[1, 2, N]`: concatenated ids, then cumulative end offsets padded
 * with -1) as id sequences.
 */
export function wordListInput(inputs: Inputs, name: string): number[][] {
  const t = inputs.get(name);
  if (!t || t.shape.length < 2) return [];
  const n = t.shape[t.shape.length - 1] ?? 0;
  const flat = (t.data as readonly unknown[]).map(Number);
  const ids = flat.slice(0, n);
  const offsets = flat.slice(n, 2 * n);
  const words: number[][] = [];
  let start = 0;
  for (const end of offsets) {
    if (end < 0) break;
    if (end > start) words.push(ids.slice(start, end));
    start = end;
  }
  return words;
}
