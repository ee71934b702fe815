import { readFileSync } from 'node:fs';
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

// The names an entry's API uses without exporting them, as its API report (checked against the
// build by test/api-reports) lists them. API Extractor reads one entry at a time, so a type of the
// other entry is listed too; it renames one that shadows a global (`Parameters` as `Parameters_2`).
function unexportedIn(report: string): string[] {
  const text = readFileSync(fileURLToPath(new URL(`../api/${report}.api.md`, import.meta.url)), 'utf8');
  expect(text).toContain('API Report File for "@trtllm/sdk"');
  const names = [...text.matchAll(/\(ae-forgotten-export\) The symbol "([^"]+)"/g)].map((m) =>
    m[1]!.replace(/_\d+$/, ''),
  );
  return [...new Set(names)].sort();
}

// The application API (issue 54): what a user of TritonLlm names. Everything a transport or an
// adapter needs besides goes to `@trtllm/sdk/transport`, which semver does not bind. Small literal
// unions (an endpoint's state, how an early stop reached the server) are written inline in the field
// that holds them rather than named (`EndpointStats['state']` names one where needed).
const FACE_LIMIT = 60;

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

  it('uses in its API only types that one of its two entries exports', () => {
    const fromFace = unexportedIn('index');
    const fromKit = unexportedIn('transport');
    // The application API may name a transport author's type (the `Transport` contract's parts,
    // the telemetry shapes): the kit exports it. The kit may name the application's types.
    expect(fromFace.filter((name) => !kit.includes(name))).toEqual([]);
    expect(fromKit.filter((name) => !face.includes(name))).toEqual([]);
  });
});
