import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IncrementalDetokenizer, TritonLlmError } from '@trtllm/sdk';
import { loadTokenizer, tokenizerFromJson } from '@trtllm/tokenizers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { load, mixedText, REAL_TOKENIZERS, readFiles } from './real-tokenizers.js';

function idOf(
  files: ReturnType<typeof readFiles>,
  field: 'eos_token' | 'pad_token' | 'bos_token',
): number | undefined {
  const value = files.config[field];
  if (typeof value !== 'string') return undefined;
  return files.tokenizerJson.added_tokens.find((token) => token.content === value)?.id;
}

async function rejection(promise: Promise<unknown>): Promise<TritonLlmError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TritonLlmError);
  return err as TritonLlmError;
}

describe.each(REAL_TOKENIZERS)('loadTokenizer with $name', (real) => {
  it('takes endId, padId and bosId from the eos, pad and bos tokens of tokenizer_config.json', async () => {
    const tokenizer = await load(real);
    const files = readFiles(real);
    expect(tokenizer.endId).toBe(idOf(files, 'eos_token'));
    expect(tokenizer.endId).toBeTypeOf('number');
    expect(tokenizer.padId).toBe(idOf(files, 'pad_token'));
    expect(tokenizer.bosId).toBe(idOf(files, 'bos_token'));
  });

  it('decodes what it encodes back to the same text', async () => {
    const tokenizer = await load(real);
    await fc.assert(
      fc.asyncProperty(mixedText, async (text) => {
        expect(tokenizer.decode(tokenizer.encode(text))).toBe(text.normalize('NFC'));
      }),
      { numRuns: 100 },
    );
  });

  it('adds special tokens only when asked and drops them on decode unless told to keep them', async () => {
    const tokenizer = await load(real);
    const files = readFiles(real);
    const plain = tokenizer.encode('Hello');
    expect(plain).not.toContain(tokenizer.bosId);
    if (tokenizer.bosId !== undefined) {
      expect(tokenizer.encode('Hello', { addSpecialTokens: true })[0]).toBe(tokenizer.bosId);
    }
    const eos = files.config.eos_token as string;
    const ids = [...plain, tokenizer.endId!];
    expect(tokenizer.decode(ids)).toBe('Hello');
    expect(tokenizer.decode(ids, { skipSpecialTokens: false })).toBe(`Hello${eos}`);
    expect(tokenizer.decode([])).toBe('');
  });

  it('rejects an id outside the vocabulary with invalid_argument', async () => {
    const tokenizer = await load(real);
    for (const id of [tokenizer.vocabSize, -1, 1.5]) {
      expect(() => tokenizer.decode([1, id])).toThrowError(
        expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining(String(id)) }),
      );
    }
  });
});

describe('an id outside the vocabulary in a stream', () => {
  it('is refused with invalid_argument while the ids before it keep streaming', async () => {
    const tokenizer = await load(REAL_TOKENIZERS[1]!);
    const detokenizer = new IncrementalDetokenizer(tokenizer);
    const [first = 0, ...rest] = tokenizer.encode('机器 learning');
    detokenizer.push([first]);
    expect(() => detokenizer.push([tokenizer.vocabSize + 7])).toThrowError(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
    const text = [detokenizer.text, ...rest.map((id) => detokenizer.push([id])), detokenizer.flush()].join(
      '',
    );
    expect(text).toBe('机器 learning');
    expect(detokenizer.ids).toEqual(tokenizer.encode('机器 learning'));
  });
});

describe('loading tokenizer files', () => {
  it('builds a tokenizer from parsed JSON without a config, with no special ids', () => {
    const files = readFiles(REAL_TOKENIZERS[0]!);
    const tokenizer = tokenizerFromJson(files.tokenizerJson);
    expect(tokenizer.endId).toBeUndefined();
    expect(tokenizer.padId).toBeUndefined();
    expect(tokenizer.decode(tokenizer.encode('Hello world'))).toBe('Hello world');
  });

  it('loads a directory without tokenizer_config.json', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tokenizer-'));
    const files = readFiles(REAL_TOKENIZERS[0]!);
    await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(files.tokenizerJson));
    const tokenizer = await loadTokenizer(dir);
    expect(tokenizer.endId).toBeUndefined();
    expect(tokenizer.decode(tokenizer.encode('机器 🤖'))).toBe('机器 🤖');
  });

  it('answers a directory without tokenizer.json with not_found naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tokenizer-'));
    const err = await rejection(loadTokenizer(dir));
    expect(err.code).toBe('not_found');
    expect(err.message).toContain(join(dir, 'tokenizer.json'));
  });

  it('answers malformed JSON with invalid_argument naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tokenizer-'));
    await writeFile(join(dir, 'tokenizer.json'), '{"model": ');
    const err = await rejection(loadTokenizer(dir));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toContain('tokenizer.json');
  });

  it('answers a config whose eos_token is not in the vocabulary with invalid_argument', () => {
    const files = readFiles(REAL_TOKENIZERS[0]!);
    expect(() => tokenizerFromJson(files.tokenizerJson, { eos_token: '<|no such token|>' })).toThrowError(
      expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining('eos_token') }),
    );
  });

  it('answers something that is not a tokenizer.json with invalid_argument', () => {
    expect(() => tokenizerFromJson({ hello: 'world' })).toThrowError(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });
});
