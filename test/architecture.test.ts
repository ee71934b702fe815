/**
 * The shape of the house, checked on the sources: no import cycles between the files of a package,
 * core imports no other package of ours, no transport imports another, and nothing imports a
 * package that depends on it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const packagesDir = join(root, 'packages');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'gen' ? [] : sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * The module specifiers a file imports or re-exports. With `runtime`, only those that stay in the
 * JavaScript: `import type`, and imports whose every name is `type`, are erased by the compiler.
 */
function specifiers(file: string, runtime = false): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(import|export)\s+(type\s+)?([^'"]*?)from\s+'([^']+)'/g)) {
    const [, , typeOnly, names, specifier] = m;
    const allTypes =
      /^\{[^}]*\}\s*$/.test(names!.trim()) &&
      names!
        .replace(/[{}\s]/g, '')
        .split(',')
        .filter(Boolean)
        .every((n) => n.startsWith('type'));
    if (!runtime || (typeOnly === undefined && !allTypes)) found.push(specifier!);
  }
  for (const m of text.matchAll(/import\(\s*'([^']+)'\s*\)/g)) found.push(m[1]!);
  return found;
}

const packages = readdirSync(packagesDir).map((dir) => {
  const manifest = JSON.parse(readFileSync(join(packagesDir, dir, 'package.json'), 'utf8')) as {
    name: string;
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const files = sourceFiles(join(packagesDir, dir, 'src'));
  const ours = new Set(files.flatMap((f) => specifiers(f)).filter((s) => s.startsWith('@trtllm/')));
  return {
    dir,
    name: manifest.name,
    files,
    imports: [...ours].map((s) => s.split('/').slice(0, 2).join('/')),
  };
});

describe('the dependency graph', () => {
  it('has no import cycle between the source files of any package (imports that stay at run time)', () => {
    const cycles: string[] = [];
    for (const pkg of packages) {
      const edges = new Map<string, string[]>();
      for (const file of pkg.files) {
        edges.set(
          file,
          specifiers(file, true)
            .filter((s) => s.startsWith('.'))
            .map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')))
            .filter((target) => pkg.files.includes(target)),
        );
      }
      const state = new Map<string, 'open' | 'done'>();
      const visit = (file: string, path: string[]): void => {
        if (state.get(file) === 'done') return;
        if (state.get(file) === 'open') {
          cycles.push(
            path
              .slice(path.indexOf(file))
              .concat(file)
              .map((f) => relative(root, f))
              .join(' -> '),
          );
          return;
        }
        state.set(file, 'open');
        for (const next of edges.get(file) ?? []) visit(next, [...path, file]);
        state.set(file, 'done');
      };
      for (const file of pkg.files) visit(file, []);
    }
    expect(cycles).toEqual([]);
  });

  it('keeps core free of our other packages, and transports and the fake free of each other', () => {
    const importsOf = (name: string) => packages.find((p) => p.name === name)?.imports ?? [];
    expect(importsOf('@trtllm/sdk')).toEqual([]);
    expect(importsOf('@trtllm/grpc').filter((n) => n !== '@trtllm/sdk')).toEqual([]);
    expect(importsOf('@trtllm/http').filter((n) => n !== '@trtllm/sdk')).toEqual([]);
    // The fake shares nothing with the client it tests.
    expect(importsOf('@trtllm/testing')).toEqual([]);
  });

  it('has no cycle between packages, and each imports only packages it declares', () => {
    const byName = new Map(packages.map((p) => [p.name, p]));
    for (const pkg of packages) {
      const manifest = JSON.parse(readFileSync(join(packagesDir, pkg.dir, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
      };
      const declared = new Set([
        ...Object.keys(manifest.dependencies ?? {}),
        ...Object.keys(manifest.peerDependencies ?? {}),
      ]);
      const undeclared = pkg.imports.filter((n) => n !== pkg.name && !declared.has(n));
      expect({ package: pkg.name, undeclared }).toEqual({ package: pkg.name, undeclared: [] });
    }
    const reaches = (from: string, to: string, seen = new Set<string>()): boolean => {
      if (seen.has(from)) return false;
      seen.add(from);
      const imports = byName.get(from)?.imports ?? [];
      return imports.some((n) => n !== from && (n === to || reaches(n, to, seen)));
    };
    const cyclic = packages.filter((p) => p.imports.some((n) => n !== p.name && reaches(n, p.name)));
    expect(cyclic.map((p) => p.name)).toEqual([]);
  });
});

/**
 * The import cycles among `files` (each as `a -> b -> a`), following every local import, type-only
 * ones included: a layer's files must form a tree of dependencies, whatever the kind of import.
 */
function importCycles(
  files: readonly string[],
  localImports: (file: string) => readonly { readonly target: string }[],
  show: (file: string) => string,
): string[] {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, path: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...path.slice(path.indexOf(file)), file].map(show).join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const { target } of localImports(file)) if (files.includes(target)) visit(target, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of files) visit(file, []);
  return cycles;
}

describe('the layers of @trtllm/http', () => {
  // Each folder of packages/http/src is one layer, entered only through its index.ts. Engines speak
  // bytes and headers (engine/ is their contract, node/ and fetch/ implement it), the call layer
  // speaks messages, the transport core's types; imports point down that list only.
  const src = join(packagesDir, 'http', 'src');
  const LAYERS: Readonly<Record<string, 'engine' | 'call' | 'transport'>> = {
    engine: 'engine',
    node: 'engine',
    fetch: 'engine',
    call: 'call',
    transport: 'transport',
  };
  const files = sourceFiles(src);
  /** The layer folder of a file, or undefined for the files at the root (entry points, shared options and errors). */
  const folderOf = (file: string): string | undefined => {
    const parts = relative(src, file).split('/');
    return parts.length > 1 ? parts[0] : undefined;
  };
  /** Each import of a file inside the package, resolved to the file it names (type-only ones included). */
  const localImports = (file: string) =>
    specifiers(file)
      .filter((s) => s.startsWith('.'))
      .map((s) => ({ specifier: s, target: resolve(dirname(file), s.replace(/\.js$/, '.ts')) }));
  const show = (file: string) => relative(src, file);

  it('has a declared layer for every folder of src', () => {
    const folders = readdirSync(src).filter((name) => statSync(join(src, name)).isDirectory());
    expect(folders.filter((name) => LAYERS[name] === undefined)).toEqual([]);
    for (const folder of folders) expect(files).toContain(join(src, folder, 'index.ts'));
  });

  it("enters a layer folder from outside only through the folder's index.ts", () => {
    const breaches: string[] = [];
    for (const file of files) {
      for (const { specifier, target } of localImports(file)) {
        const folder = folderOf(target);
        if (folder === undefined || folder === folderOf(file)) continue;
        if (target !== join(src, folder, 'index.ts')) breaches.push(`${show(file)} imports '${specifier}'`);
      }
    }
    expect(breaches).toEqual([]);
  });

  it('keeps engines below everything: they import only the engine contract, and no package of ours', () => {
    const breaches: string[] = [];
    for (const file of files) {
      const folder = folderOf(file);
      if (folder === undefined || LAYERS[folder] !== 'engine') continue;
      for (const { specifier, target } of localImports(file)) {
        const to = folderOf(target);
        if (to !== folder && to !== 'engine') breaches.push(`${show(file)} imports '${specifier}'`);
      }
      for (const specifier of specifiers(file).filter((s) => s.startsWith('@trtllm/'))) {
        breaches.push(`${show(file)} imports '${specifier}'`);
      }
    }
    expect(breaches).toEqual([]);
  });

  it('keeps the call layer below the transport layer', () => {
    const breaches = files
      .filter((file) => folderOf(file) === 'call')
      .flatMap((file) =>
        localImports(file)
          .filter(({ target }) => folderOf(target) === 'transport')
          .map(({ specifier }) => `${show(file)} imports '${specifier}'`),
      );
    expect(breaches).toEqual([]);
  });

  it('has no import cycle between its files, type-only imports included', () => {
    expect(importCycles(files, localImports, show)).toEqual([]);
  });
});

describe('the layers of @trtllm/grpc', () => {
  // Each folder of packages/grpc/src is one layer, entered only through its index.ts: the HTTP/2
  // engine (h2/) speaks bytes and headers, the call layer (call/) gRPC messages, the transport
  // (transport/) core's types; imports point down that list only. gen/ is protobuf-es's output.
  const src = join(packagesDir, 'grpc', 'src');
  const LAYERS: Readonly<Record<string, 'engine' | 'call' | 'transport' | 'generated'>> = {
    h2: 'engine',
    call: 'call',
    transport: 'transport',
    gen: 'generated',
  };
  const files = sourceFiles(src);
  const generated = join(src, 'gen');
  /** The layer folder of a file, or undefined for the files at the root (the package's index.ts). */
  const folderOf = (file: string): string | undefined => {
    const parts = relative(src, file).split('/');
    return parts.length > 1 ? parts[0] : undefined;
  };
  /** Each import of a file inside the package, resolved to the file it names (type-only ones included). */
  const localImports = (file: string) =>
    specifiers(file)
      .filter((s) => s.startsWith('.'))
      .map((s) => ({ specifier: s, target: resolve(dirname(file), s.replace(/\.js$/, '.ts')) }));
  const show = (file: string) => relative(src, file);
  const breachesOf = (from: string, to: (target: string) => boolean) =>
    files
      .filter((file) => folderOf(file) === from)
      .flatMap((file) =>
        localImports(file)
          .filter(({ target }) => to(target))
          .map(({ specifier }) => `${show(file)} imports '${specifier}'`),
      );

  it('has a declared layer for every folder of src, each with its index.ts', () => {
    const folders = readdirSync(src).filter((name) => statSync(join(src, name)).isDirectory());
    expect(folders.filter((name) => LAYERS[name] === undefined)).toEqual([]);
    for (const folder of folders.filter((name) => LAYERS[name] !== 'generated')) {
      expect(files).toContain(join(src, folder, 'index.ts'));
    }
  });

  it("enters a layer folder from outside only through the folder's index.ts", () => {
    const breaches: string[] = [];
    for (const file of files) {
      for (const { specifier, target } of localImports(file)) {
        const folder = folderOf(target);
        if (folder === undefined || folder === folderOf(file) || target.startsWith(generated)) continue;
        if (target !== join(src, folder, 'index.ts')) breaches.push(`${show(file)} imports '${specifier}'`);
      }
    }
    expect(breaches).toEqual([]);
  });

  it('keeps the engine below everything: h2/ imports nothing of the call layer, the transport or gen/', () => {
    expect(breachesOf('h2', (target) => folderOf(target) !== 'h2')).toEqual([]);
  });

  it('keeps the call layer below the transport layer', () => {
    expect(breachesOf('call', (target) => folderOf(target) === 'transport')).toEqual([]);
  });

  it('has no import cycle between its files, type-only imports included', () => {
    expect(importCycles(files, localImports, show)).toEqual([]);
  });
});
