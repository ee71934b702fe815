import { defineConfig } from 'tsup';

export default defineConfig({
  // index: the application API; transport: the kit for transport and adapter authors
  // (`@trtllm/sdk/transport`). Both builds share their code in chunks, so an application that loads
  // a transport gets one copy of each module (CJS included).
  entry: { index: 'src/index.ts', transport: 'src/transport-kit.ts' },
  format: ['esm', 'cjs'],
  splitting: true,
  // The declarations of both entries share chunks, which they import first: the lib reference that
  // `Symbol.asyncDispose` and `AsyncDisposable` need must come before those imports to count.
  dts: { banner: '/// <reference lib="esnext.disposable" preserve="true" />' },
  clean: true,
  sourcemap: true,
  target: 'es2022',
  tsconfig: 'tsconfig.json',
});
