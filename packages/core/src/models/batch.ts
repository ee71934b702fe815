import { TritonLlmError } from '../errors.js';
import { tensorNumbers } from '../tensors/readers.js';
import type { Tensor, TensorData } from '../tensors/tensor.js';
import type { InferRequest, InferResponse } from '../transport.js';
import type { EncodedRequest } from './encode-request.js';

/** Requests that travel as one wire request with a batch dimension, and which callers they serve. */
export interface BatchGroup {
  /** Indices of the requests this group carries, in batch order. */
  readonly members: readonly number[];
  /** The wire request: every input stacked along the batch dimension, the first member's id. */
  readonly request: InferRequest;
}

// Inputs whose last dimension may differ from item to item: the raw model reads only
// `input_lengths` ids of each `input_ids` row, and word lists end at their -1 offsets. Padding
// them lets prompts of different lengths share a request.
const RAGGED = new Set(['input_ids', 'stop_words_list', 'bad_words_list']);

/**
 * Groups single-item requests (each input shaped `[1, ...]`) into batched requests of at most
 * `maxBatchSize` items. Requests can share a group only when they send the same inputs with the
 * same data types and shapes (ragged inputs aside), ask for the same outputs and carry the same
 * parameters; the rest go in groups of their own. `solo[i]` keeps request i alone, so that an id
 * the caller chose reaches the server unchanged.
 */
export function planBatches(
  encoded: readonly EncodedRequest[],
  maxBatchSize: number,
  solo: readonly boolean[] = [],
): BatchGroup[] {
  const byKey = new Map<string, number[]>();
  encoded.forEach((e, i) => {
    const key = solo[i] === true ? `solo:${i}` : groupKey(e.request);
    const members = byKey.get(key);
    if (members === undefined) byKey.set(key, [i]);
    else members.push(i);
  });
  const groups: BatchGroup[] = [];
  const size = Math.max(1, maxBatchSize);
  for (const members of byKey.values()) {
    for (let start = 0; start < members.length; start += size) {
      const slice = members.slice(start, start + size);
      groups.push({ members: slice, request: stackRequests(slice.map((i) => encoded[i]!.request)) });
    }
  }
  return groups;
}

function groupKey(request: InferRequest): string {
  const inputs = request.inputs.map((t) => {
    const rest = RAGGED.has(t.name) && isPaddable(t) ? t.shape.slice(1, -1) : t.shape.slice(1);
    return `${t.name}:${t.datatype}:${rest.join('x')}:${t.shape.length}`;
  });
  return JSON.stringify([
    request.model,
    request.modelVersion ?? '',
    inputs,
    request.outputs ?? [],
    Object.entries(request.parameters ?? {}).map(([k, v]) => [k, typeof v, String(v)]),
  ]);
}

function isPaddable(t: Tensor): boolean {
  return t.shape[0] === 1 && t.shape.length >= 2 && ArrayBuffer.isView(t.data) && !isBigIntArray(t.data);
}

function isBigIntArray(data: TensorData): boolean {
  return data instanceof BigInt64Array || data instanceof BigUint64Array;
}

/** One request whose inputs are the items' inputs stacked along the batch dimension. */
function stackRequests(items: readonly InferRequest[]): InferRequest {
  const first = items[0]!;
  if (items.length === 1) return first;
  const inputs = first.inputs.map((_, j) => stackTensors(items.map((r) => r.inputs[j]!)));
  // A batch cannot travel on HTTP's /generate extension (one item per request): /infer carries it.
  return { ...first, inputs, endpoint: 'infer' };
}

function stackTensors(rows: readonly Tensor[]): Tensor {
  const first = rows[0]!;
  const width = Math.max(...rows.map((t) => t.shape[t.shape.length - 1] ?? 0));
  const padded = rows.map((t) => (t.shape[t.shape.length - 1] === width ? t : padLastDim(t, width)));
  const shape = [rows.length, ...first.shape.slice(1, -1), width];
  return { name: first.name, datatype: first.datatype, shape, data: concat(padded.map((t) => t.data)) };
}

/**
 * Widens the last dimension: ids padded with 0, word-list offsets (the second row of each
 * `[2, N]` list) with -1, which TensorRT-LLM reads as "no more words".
 */
function padLastDim(t: Tensor, width: number): Tensor {
  const from = t.shape[t.shape.length - 1] ?? 0;
  const rows = from === 0 ? countRows(t.shape) : t.data.length / from;
  const data = t.data as Exclude<TensorData, boolean[] | Uint8Array[] | BigInt64Array | BigUint64Array>;
  const Ctor = data.constructor as new (length: number) => typeof data;
  const out = new Ctor(rows * width);
  const isWordList = t.name !== 'input_ids' && t.shape.length === 3;
  for (let r = 0; r < rows; r++) {
    if (isWordList && r % 2 === 1) out.fill(-1, r * width, (r + 1) * width);
    out.set(data.subarray(r * from, (r + 1) * from), r * width);
  }
  return { ...t, shape: [...t.shape.slice(0, -1), width], data: out };
}

function countRows(shape: readonly number[]): number {
  return shape.slice(0, -1).reduce((a, b) => a * b, 1);
}

function concat(parts: readonly TensorData[]): TensorData {
  const first = parts[0]!;
  if (Array.isArray(first)) return (parts as readonly (boolean[] | Uint8Array[])[]).flat() as TensorData;
  const typed = parts as readonly Exclude<TensorData, boolean[] | Uint8Array[]>[];
  const Ctor = first.constructor as new (length: number) => Exclude<TensorData, boolean[] | Uint8Array[]>;
  const out = new Ctor(typed.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of typed) {
    (out as { set(a: ArrayLike<number | bigint>, o: number): void }).set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * Splits the response of a batched request into one response per item, each output shaped
 * `[1, ...]` like the answer to a request of its own. Rows are matched to items by the
 * `batch_index` output when the model sends one, else by position. Outputs without the batch
 * dimension are given to every item.
 */
export function splitBatchResponse(response: InferResponse, size: number): InferResponse[] {
  if (size === 1) return [response];
  const order = rowOrder(response, size);
  const perItem: Tensor[][] = Array.from({ length: size }, () => []);
  for (const t of response.outputs) {
    if (t.shape[0] !== size) {
      for (const outputs of perItem) outputs.push(t);
      continue;
    }
    const width = t.data.length / size;
    for (let r = 0; r < size; r++) {
      perItem[order[r]!]!.push({
        name: t.name,
        datatype: t.datatype,
        shape: [1, ...t.shape.slice(1)],
        data: t.data.slice(r * width, (r + 1) * width) as TensorData,
      });
    }
  }
  return perItem.map((outputs) => ({ ...response, outputs }));
}

function rowOrder(response: InferResponse, size: number): number[] {
  const index = response.outputs.find((t) => t.name === 'batch_index');
  const byPosition = Array.from({ length: size }, (_, r) => r);
  if (index === undefined || index.shape[0] !== size) return byPosition;
  const order = tensorNumbers(index);
  const valid =
    order.length === size &&
    new Set(order).size === size &&
    order.every((b) => Number.isInteger(b) && b >= 0 && b < size);
  if (!valid) {
    throw new TritonLlmError(
      'protocol',
      `batch_index [${order.join(', ')}] is not a permutation of 0..${size - 1}`,
      {
        model: response.model,
        requestId: response.id,
      },
    );
  }
  return order;
}
