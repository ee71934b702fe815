import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Matrix, TritonLlmError } from '@trtllm/sdk';

/** What TensorRT-LLM's `hf_lora_convert.py` writes for one adapter, as core's LoRA options take it. */
export interface LoraFiles {
  readonly weights: Matrix;
  readonly config: readonly (readonly [number, number, number])[];
}

/** One `.npy` array: its element type, its shape and its values. */
interface NpyArray {
  readonly descr: string;
  readonly shape: readonly number[];
  readonly values: Float32Array | Int32Array;
}

/** IEEE half to single precision (the `.npy` of TensorRT-LLM's LoRA weights is float16). */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/**
 * Reads NumPy's `.npy` format (magic, version, a header dict, raw little-endian C-order data) for
 * the types LoRA files use: `<f2`, `<f4` and `<i4`.
 */
export function readNpy(bytes: Uint8Array, file: string): NpyArray {
  const bad = (why: string) =>
    new TritonLlmError(
      'invalid_argument',
      `${file}: is not a .npy array TensorRT-LLM's LoRA converter writes (${why})`,
      {
        field: 'lora',
      },
    );
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 10 || bytes[0] !== 0x93 || String.fromCharCode(...bytes.subarray(1, 6)) !== 'NUMPY')
    throw bad('no NUMPY magic');
  const major = bytes[6]!;
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = new TextDecoder().decode(bytes.subarray(start, start + headerLength));
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr === undefined || shapeText === undefined) throw bad('no descr or shape in its header');
  if (/'fortran_order':\s*True/.test(header)) throw bad('Fortran order');
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const data = start + headerLength;
  const size = { '<f2': 2, '<f4': 4, '<i4': 4 }[descr];
  if (size === undefined) throw bad(`element type ${descr}; expected <f2, <f4 or <i4`);
  if (bytes.length - data < count * size)
    throw bad(`${bytes.length - data} data bytes for shape (${shapeText})`);
  const values = descr === '<i4' ? new Int32Array(count) : new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const at = data + i * size;
    values[i] =
      descr === '<f2'
        ? halfToFloat(view.getUint16(at, true))
        : descr === '<f4'
          ? view.getFloat32(at, true)
          : view.getInt32(at, true);
  }
  return { descr, shape, values };
}

/** A shape without its leading batch dimensions of 1 (`(1, 8, 1024)` is `[8, 1024]`). */
function rows(shape: readonly number[], file: string, width?: number): [number, number] {
  const dims = [...shape];
  while (dims.length > 2 && dims[0] === 1) dims.shift();
  if (dims.length !== 2 || (width !== undefined && dims[1] !== width))
    throw new TritonLlmError(
      'invalid_argument',
      `${file}: shape (${shape.join(', ')}) is not [rows, ${width ?? 'columns'}] (after a batch dimension of 1)`,
      { field: 'lora' },
    );
  return [dims[0]!, dims[1]!];
}

/**
 * An adapter directory of TensorRT-LLM's `hf_lora_convert.py`: `model.lora_weights.npy` (float16
 * `[1, rows, columns]`) and `model.lora_config.npy` (int32 `[1, rows, 3]`), as the `lora_weights`
 * and `lora_config` the C++ model takes with the first request of a task id.
 */
export async function loadLoraDir(dir: string): Promise<LoraFiles> {
  const read = async (name: string) => {
    const file = join(dir, name);
    try {
      return { file, bytes: await readFile(file) };
    } catch (err) {
      throw new TritonLlmError(
        'not_found',
        `${file}: cannot be read (${(err as Error).message}); a LoRA directory holds model.lora_weights.npy and model.lora_config.npy (TensorRT-LLM's hf_lora_convert.py)`,
        { field: 'lora', cause: err },
      );
    }
  };
  const w = await read('model.lora_weights.npy');
  const c = await read('model.lora_config.npy');
  const weights = readNpy(w.bytes, w.file);
  const config = readNpy(c.bytes, c.file);
  if (config.descr !== '<i4')
    throw new TritonLlmError('invalid_argument', `${c.file}: element type ${config.descr}; expected <i4`, {
      field: 'lora',
    });
  const [configRows] = rows(config.shape, c.file, 3);
  const v = config.values;
  const triples: [number, number, number][] = [];
  for (let r = 0; r < configRows; r++) triples.push([v[3 * r]!, v[3 * r + 1]!, v[3 * r + 2]!]);
  return {
    weights: { data: Float32Array.from(weights.values), shape: rows(weights.shape, w.file) },
    config: triples,
  };
}
