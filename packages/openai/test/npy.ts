import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A version 1.0 `.npy` file as NumPy's format spec lays it out, header padded to 64 bytes. */
export function npy(descr: string, shape: readonly number[], data: Uint8Array): Uint8Array {
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  const head = new Uint8Array(10);
  head.set([0x93, ...Buffer.from('NUMPY'), 1, 0]);
  new DataView(head.buffer).setUint16(8, header.length, true);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), data]);
}

/** A LoRA directory as TensorRT-LLM's hf_lora_convert.py writes it: 2x2 float16 weights and two config rows. */
export async function writeLoraDir(dir: string): Promise<void> {
  const halves = new Uint16Array([0x3c00, 0xc000, 0x3800, 0x0000]);
  await writeFile(join(dir, 'model.lora_weights.npy'), npy('<f2', [1, 2, 2], new Uint8Array(halves.buffer)));
  const config = new Int32Array([1, 0, 2, 2, 0, 2]);
  await writeFile(join(dir, 'model.lora_config.npy'), npy('<i4', [1, 2, 3], new Uint8Array(config.buffer)));
}
