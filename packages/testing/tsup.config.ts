import { cp, rm } from 'node:fs/promises';
import { defineConfig } from 'tsup';

// The fake loads the repository's proto/ at run time; the published package carries its own copy.
async function copyProto(): Promise<void> {
  await rm('proto', { recursive: true, force: true });
  await cp('../../proto', 'proto', { recursive: true });
}

export default defineConfig([
  {
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    target: 'es2022',
    // import.meta.url (used to find proto/) also works in the CommonJS build.
    shims: true,
    tsconfig: 'tsconfig.json',
    onSuccess: copyProto,
  },
  {
    entry: ['src/cli.ts'],
    format: ['esm'],
    sourcemap: true,
    target: 'es2022',
    banner: { js: '#!/usr/bin/env node' },
    tsconfig: 'tsconfig.json',
  },
]);
