import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  tsconfig: 'tsconfig.json',
  // protobuf-es and connect-es go into the bundle, tree-shaken, instead of being imported: Node
  // loads an ESM package module by module (about 60 files here), which cost a script about 90 ms
  // before its first token, against one file parsed at once (issue #53, `pnpm bench:overhead`'s
  // cold-start row). Neither appears in the package's types, so nothing a user sees changes.
  noExternal: ['@bufbuild/protobuf', '@connectrpc/connect'],
  // Their files' own notices are comments the bundler drops; this one stays (Apache-2.0, section 4).
  banner: {
    js: '/*! Includes @bufbuild/protobuf and @connectrpc/connect, Copyright 2021-2026 Buf Technologies, Inc., under the Apache License, Version 2.0 (LICENSE). */',
  },
});
