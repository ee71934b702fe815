import { defineConfig } from 'tsup';

export default defineConfig({
  // index: fetch only (browsers, edge runtimes); node: the same API with streams on Node's sockets.
  entry: ['src/index.ts', 'src/node.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  tsconfig: 'tsconfig.json',
});
