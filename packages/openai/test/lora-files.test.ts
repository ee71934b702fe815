import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadLoraDir } from '../src/lora-files.js';
import { npy } from './npy.js';

describe("loadLoraDir: hf_lora_convert.py's output", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'trtllm-lora-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  test('reads float16 weights [1, rows, columns] and int32 config [1, rows, 3] without the batch dimension', async () => {
    // 1.0, -2.0, 0.5, 0 and 65504 (the largest half), 2^-24 (the smallest subnormal) in IEEE half.
    const halves = new Uint16Array([0x3c00, 0xc000, 0x3800, 0x0000, 0x7bff, 0x0001]);
    await writeFile(
      join(dir, 'model.lora_weights.npy'),
      npy('<f2', [1, 2, 3], new Uint8Array(halves.buffer)),
    );
    const config = new Int32Array([1, 0, 8, 2, 0, 8]);
    await writeFile(join(dir, 'model.lora_config.npy'), npy('<i4', [1, 2, 3], new Uint8Array(config.buffer)));
    const files = await loadLoraDir(dir);
    expect(files.weights.shape).toEqual([2, 3]);
    expect(Array.from(files.weights.data)).toEqual([1, -2, 0.5, 0, 65504, 2 ** -24]);
    expect(files.config).toEqual([
      [1, 0, 8],
      [2, 0, 8],
    ]);
  });

  test('a directory without the files is not_found naming the file and what it should hold', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'trtllm-lora-empty-'));
    try {
      await expect(loadLoraDir(empty)).rejects.toMatchObject({
        code: 'not_found',
        message: expect.stringContaining('model.lora_weights.npy: cannot be read'),
      });
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  test('a config that is not rows of three is refused naming its shape', async () => {
    const bad = await mkdtemp(join(tmpdir(), 'trtllm-lora-bad-'));
    try {
      await writeFile(join(bad, 'model.lora_weights.npy'), npy('<f4', [1, 1], new Uint8Array(4)));
      await writeFile(join(bad, 'model.lora_config.npy'), npy('<i4', [1, 2], new Uint8Array(8)));
      await expect(loadLoraDir(bad)).rejects.toMatchObject({
        code: 'invalid_argument',
        message: expect.stringContaining('shape (1, 2) is not [rows, 3]'),
      });
    } finally {
      await rm(bad, { recursive: true, force: true });
    }
  });
});
