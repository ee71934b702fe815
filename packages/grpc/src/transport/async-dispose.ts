/// <reference lib="esnext.disposable" preserve="true" />

/**
 * The key `await using` disposes by: `Symbol.asyncDispose` where the runtime has it (Node 20.4+,
 * Bun, Deno, recent browsers), else `Symbol.for('Symbol.asyncDispose')`, the key that esbuild's
 * and core-js's `await using` fall back to on runtimes without it.
 */
export const asyncDispose: typeof Symbol.asyncDispose =
  Symbol.asyncDispose ?? (Symbol.for('Symbol.asyncDispose') as typeof Symbol.asyncDispose);
