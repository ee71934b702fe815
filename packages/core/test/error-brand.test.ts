import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as source from '../src/index.js';
import type * as kit from '../src/transport-kit.js';

// The two builds a package manager may hand out side by side: `pnpm --filter @trtllm/sdk build`
// (or `pnpm build`, which CI runs before the tests) makes them.
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
if (!existsSync(`${dist}index.js`) || !existsSync(`${dist}index.cjs`)) {
  throw new Error(`${dist} has no build: run pnpm --filter @trtllm/sdk build first`);
}
const esm = (await import(pathToFileURL(`${dist}index.js`).href)) as typeof source;
const cjs = createRequire(import.meta.url)(`${dist}index.cjs`) as typeof source;
// The transport kit's CJS build (`@trtllm/sdk/transport`), whose validation makes the errors.
const cjsKit = createRequire(import.meta.url)(`${dist}transport.cjs`) as typeof kit;

const copies = { esm, cjs, source } as const;
type Copy = keyof typeof copies;
const pairs = (Object.keys(copies) as Copy[]).flatMap((made) =>
  (Object.keys(copies) as Copy[]).map((checked) => [made, checked] as const),
);

describe('instanceof TritonLlmError across copies of the SDK', () => {
  it('the ESM and CJS builds are two classes', () => {
    expect(esm.TritonLlmError).not.toBe(cjs.TritonLlmError);
  });

  it.each(pairs)('an error made by the %s copy is an instance of the %s class', (made, checked) => {
    const err = new copies[made].TritonLlmError('unavailable', 'connection refused');
    expect(err instanceof copies[checked].TritonLlmError).toBe(true);
    expect(err instanceof Error).toBe(true);
  });

  it('errors made by validation and by withContext carry the brand too', () => {
    let thrown: unknown;
    try {
      cjsKit.validateRequest({ prompt: '', maxTokens: 1 });
    } catch (err) {
      thrown = err;
    }
    expect(thrown instanceof esm.TritonLlmError).toBe(true);
    const copy = (thrown as source.TritonLlmError).withContext({ requestId: '9' });
    expect([copy instanceof esm.TritonLlmError, copy.requestId]).toEqual([true, '9']);
  });

  it('TritonLlmError.from keeps an error of the other build as it is', () => {
    const err = new cjs.TritonLlmError('not_found', "unknown model 'x'");
    expect(esm.TritonLlmError.from(err)).toBe(err);
  });

  it('look-alikes are not instances: a plain Error named TritonLlmError, an object with a code', () => {
    const named = Object.assign(new Error('x'), { name: 'TritonLlmError', code: 'unavailable' });
    expect(named instanceof esm.TritonLlmError).toBe(false);
    expect({ code: 'unavailable', message: 'x' } instanceof cjs.TritonLlmError).toBe(false);
    expect((null as unknown) instanceof source.TritonLlmError).toBe(false);
  });

  it('a subclass keeps the prototype check of its own class', () => {
    class QuotaError extends esm.TritonLlmError {}
    const quota = new QuotaError('resource_exhausted', 'quota');
    expect(quota instanceof QuotaError).toBe(true);
    expect(quota instanceof esm.TritonLlmError).toBe(true);
    expect(quota instanceof cjs.TritonLlmError).toBe(true);
    expect(new esm.TritonLlmError('resource_exhausted', 'quota') instanceof QuotaError).toBe(false);
    expect(new cjs.TritonLlmError('resource_exhausted', 'quota') instanceof QuotaError).toBe(false);
  });
});
