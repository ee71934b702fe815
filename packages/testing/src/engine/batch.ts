/**
 * Requests with a batch dimension N > 1: split into the N one-item requests each row stands for,
 * and the items' responses stacked back along the batch dimension (GENERATOR.md, "Batches").
 */
import { TritonError } from '../errors.js';
import { elementCount, int32Tensor, type Tensor, type TensorData } from '../tensor.js';
import type { Inputs } from './inputs.js';
import type { ModelResponse } from './request.js';

/** The request's batch size: validation made every input's leading dimension the same. */
export function batchSize(inputs: Inputs): number {
  for (const t of inputs.values()) return t.shape[0] ?? 1;
  return 1;
}

/** The refusal of a decoupled model (they answer one request per response stream). */
export function batchNeedsNonDecoupled(n: number): TritonError {
  return new TritonError('INVALID_ARG', `batch size ${n} > 1 is only supported by non-decoupled models`);
}

function sliceData(data: TensorData, start: number, end: number): TensorData {
  return (data as readonly unknown[]).slice(start, end) as TensorData;
}

/** Row `b` of every input, each as a `[1, ...]` tensor; a one-item batch is returned as it is. */
export function splitBatch(inputs: Inputs, n: number): Inputs[] {
  if (n <= 1) return [inputs];
  return Array.from({ length: n }, (_, b) => {
    const row = new Map<string, Tensor>();
    for (const [name, t] of inputs) {
      const rest = t.shape.slice(1);
      const per = elementCount(rest);
      row.set(name, { ...t, shape: [1, ...rest], data: sliceData(t.data, b * per, (b + 1) * per) });
    }
    return row;
  });
}

/**
 * The value a stacked output is padded with where item `item` is smaller than the largest item, at
 * `at` (the index within one item, batch dimension left out); undefined means the data type's zero.
 */
export type PadValue = (name: string, item: number, at: readonly number[]) => number | undefined;

function zeroOf(t: Tensor): TensorData[number] {
  switch (t.datatype) {
    case 'BYTES':
      return new Uint8Array(0);
    case 'BOOL':
      return false;
    case 'INT64':
    case 'UINT64':
      return 0n;
    default:
      return 0;
  }
}

function padElement(t: Tensor, value: number | undefined): TensorData[number] {
  if (value === undefined) return zeroOf(t);
  return t.datatype === 'INT64' || t.datatype === 'UINT64' ? BigInt(value) : value;
}

/** `parts` (one `[1, ...]` tensor per item) as one `[N, ...]` tensor, each padded to the largest. */
function stackTensor(parts: readonly Tensor[], pad: PadValue): Tensor {
  const first = parts[0]!;
  const rank = first.shape.length;
  if (parts.some((t) => t.shape.length !== rank || t.datatype !== first.datatype)) {
    throw new TritonError('INTERNAL', `batch items disagree on the shape or type of output '${first.name}'`);
  }
  const dims = first.shape.slice(1).map((_, d) => Math.max(...parts.map((t) => t.shape[d + 1] ?? 0)));
  const per = elementCount(dims);
  const data: unknown[] = [];
  parts.forEach((t, item) => {
    const own = t.shape.slice(1);
    const at = dims.map(() => 0);
    for (let i = 0; i < per; i++) {
      // `at` walks the stacked item's indices row-major; `offset` finds them in the item's own data.
      let offset = 0;
      let inside = true;
      for (let d = 0; d < dims.length; d++) {
        const size = own[d] ?? 0;
        if (at[d]! >= size) inside = false;
        offset = offset * size + at[d]!;
      }
      data.push(inside ? t.data[offset] : padElement(t, pad(t.name, item, at)));
      for (let d = dims.length - 1; d >= 0; d--) {
        at[d]! += 1;
        if (at[d]! < dims[d]!) break;
        at[d] = 0;
      }
    }
  });
  return {
    name: first.name,
    datatype: first.datatype,
    shape: [parts.length, ...dims],
    data: data as TensorData,
  };
}

/**
 * The one response of a batch: every item's outputs stacked along dim 0 in the items' order,
 * `batch_index` numbering the items, tokens summed. One item's response is returned untouched.
 */
export function stackResponses(
  items: readonly ModelResponse[],
  pad: PadValue = () => undefined,
): ModelResponse {
  const only = items[0];
  if (!only) throw new TritonError('INTERNAL', 'a batch needs at least one item');
  if (items.length === 1) return only;
  const outputs = only.outputs.map((t) => {
    if (t.name === 'batch_index') {
      return int32Tensor(
        t.name,
        [items.length, 1],
        items.map((_, b) => b),
      );
    }
    const parts = items.map((r) => {
      const part = r.outputs.find((o) => o.name === t.name);
      if (!part) throw new TritonError('INTERNAL', `a batch item has no output '${t.name}'`);
      return part;
    });
    return stackTensor(parts, pad);
  });
  return {
    outputs,
    tokens: items.reduce((n, r) => n + r.tokens, 0),
    final: only.final,
  };
}
