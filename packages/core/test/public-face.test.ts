import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The names each entry of @trtllm/sdk exports, values and types alike, as the compiler sees them.
const entry = (file: string) => fileURLToPath(new URL(`../src/${file}`, import.meta.url));
const program = ts.createProgram([entry('index.ts'), entry('transport-kit.ts')], {
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  target: ts.ScriptTarget.ES2022,
  noEmit: true,
});
const checker = program.getTypeChecker();
function exportsOf(file: string): string[] {
  const source = program.getSourceFile(entry(file));
  const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  if (module === undefined) throw new Error(`${file} is not a module`);
  return checker
    .getExportsOfModule(module)
    .map((s) => s.name)
    .sort();
}
const face = exportsOf('index.ts');
const kit = exportsOf('transport-kit.ts');

// The application API (issue 54): what a user of TritonLlm names. Everything a transport or an
// adapter needs besides goes to `@trtllm/sdk/transport`, which semver does not bind. Raised from 60
// for the vLLM flavor's request and log-prob types (#57) and ImageInput (#56).
const FACE_LIMIT = 62;

describe('the public face of @trtllm/sdk', () => {
  it(`exports at most ${FACE_LIMIT} names from its main entry`, () => {
    expect(face.length).toBeGreaterThan(0);
    expect(face.length, face.join(' ')).toBeLessThanOrEqual(FACE_LIMIT);
  });

  it('exports the client, its error and its request and result types from the main entry', () => {
    for (const name of [
      'TritonLlm',
      'TritonLlmError',
      'ErrorCode',
      'GenerateRequest',
      'GenerateResult',
      'StreamChunk',
    ]) {
      expect(face).toContain(name);
    }
  });

  it('keeps the transport kit out of the main entry, each name in one entry only', () => {
    expect(kit.length).toBeGreaterThan(0);
    expect(face.filter((name) => kit.includes(name))).toEqual([]);
    for (const name of ['codeFromGrpcStatus', 'RetryPlan', 'InferSink', 'encodeTensorData', 'detectSchema']) {
      expect(kit).toContain(name);
    }
  });
});
