/**
 * The packages' API reports: one `packages/<dir>/api/<entry>.api.md` per entry point of each package's exports
 * map, written by API Extractor from the built .d.ts files (ESM ones; the .d.cts twins declare the same API).
 *
 *   tsx scripts/api-report.ts          check: fails when a report differs from the build (CI, `pnpm api:check`)
 *   tsx scripts/api-report.ts --update rewrites the reports from the build (`pnpm api:update`)
 *
 * Both read dist/, so run `pnpm build` first. The shared configuration is api-extractor.base.json; the entry
 * points come from the exports maps, so a new subpath gets a report without a new config file (#54).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
  type IConfigFile,
} from '@microsoft/api-extractor';

const root = fileURLToPath(new URL('..', import.meta.url));

/** One entry point of one package: its built declaration file and where its report lives. */
export interface ApiEntry {
  /** The package's folder under packages/. */
  readonly dir: string;
  /** The package's name, e.g. `@trtllm/sdk`. */
  readonly name: string;
  /** The report's name: the declaration file's name without `.d.ts` (`index`, `node`, `transport`). */
  readonly entry: string;
  /** The built ESM declaration file, absolute. */
  readonly dts: string;
  /** The checked-in report, absolute. */
  readonly report: string;
}

/** What one run found for one entry point. */
export interface ApiEntryResult extends ApiEntry {
  /** 'same': the report matches the build; 'changed'/'missing': it does not (check) or was rewritten (update). */
  readonly status: 'same' | 'changed' | 'missing';
  /** In check mode, the patch from the checked-in report to the build's, when they differ. */
  readonly diff?: string;
  /** Errors and warnings API Extractor raised for this entry (an empty list when it ran clean). */
  readonly problems: readonly string[];
}

/** Every run's outcome: one result per entry, plus report files no entry point writes any more. */
export interface ApiReportRun {
  readonly entries: readonly ApiEntryResult[];
  /** Reports without an entry point (check: listed; update: deleted), relative to the repository root. */
  readonly stale: readonly string[];
}

/** Every `types` file ending in .d.ts under an exports map's conditions, in map order. */
function declarationFiles(exportsMap: unknown, out: string[] = []): string[] {
  if (typeof exportsMap === 'string') return out;
  if (exportsMap === null || typeof exportsMap !== 'object') return out;
  for (const [key, value] of Object.entries(exportsMap)) {
    if (key === 'types' && typeof value === 'string' && value.endsWith('.d.ts')) {
      if (!out.includes(value)) out.push(value);
    } else {
      declarationFiles(value, out);
    }
  }
  return out;
}

/** The entry points of every package under packages/, from their exports maps. */
export function apiEntries(repoRoot = root): ApiEntry[] {
  const entries: ApiEntry[] = [];
  for (const dir of readdirSync(join(repoRoot, 'packages')).sort()) {
    const manifest = join(repoRoot, 'packages', dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; exports?: unknown };
    for (const file of declarationFiles(pkg.exports)) {
      const entry = basename(file, '.d.ts');
      entries.push({
        dir,
        name: pkg.name,
        entry,
        dts: join(repoRoot, 'packages', dir, file),
        report: join(repoRoot, 'packages', dir, 'api', `${entry}.api.md`),
      });
    }
  }
  return entries;
}

function extractorConfig(entry: ApiEntry, tempFolder: string): ExtractorConfig {
  const base = ExtractorConfig.loadFile(join(root, 'api-extractor.base.json'));
  const projectFolder = join(root, 'packages', entry.dir);
  const configObject: IConfigFile = {
    ...base,
    projectFolder,
    mainEntryPointFilePath: entry.dts,
    apiReport: {
      ...base.apiReport,
      enabled: true,
      reportFolder: dirname(entry.report),
      reportTempFolder: tempFolder,
      reportFileName: entry.entry,
    },
  };
  return ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: join(root, 'api-extractor.base.json'),
    packageJsonFullPath: join(projectFolder, 'package.json'),
  });
}

/**
 * Runs API Extractor over every entry point. Check mode (the default) compares each checked-in report with the
 * build and writes nothing into the tree; `update` rewrites the reports and deletes stale ones.
 */
export function runApiReports(
  options: { update?: boolean; entries?: readonly ApiEntry[] } = {},
): ApiReportRun {
  const update = options.update === true;
  const entries = options.entries ?? apiEntries();
  const temp = mkdtempSync(join(tmpdir(), 'trtllm-api-'));
  try {
    const missingBuild = entries.filter((e) => !existsSync(e.dts));
    if (missingBuild.length > 0) {
      throw new Error(
        `no build for ${missingBuild.map((e) => relative(root, e.dts)).join(', ')}: run \`pnpm build\` first`,
      );
    }
    const configs = entries.map((entry) => extractorConfig(entry, temp));
    // One TypeScript program for every entry point: the packages import each other's builds, so analysing them
    // together parses each declaration file once.
    const compilerState = CompilerState.create(configs[0]!, {
      additionalEntryPoints: entries.map((e) => e.dts),
    });
    const results: ApiEntryResult[] = entries.map((entry, i) => {
      const existed = existsSync(entry.report);
      const problems: string[] = [];
      let diff: string | undefined;
      if (update) mkdirSync(dirname(entry.report), { recursive: true });
      const result = Extractor.invoke(configs[i]!, {
        localBuild: update,
        compilerState,
        printApiReportDiff: !update,
        messageCallback: (message: ExtractorMessage) => {
          message.handled = true;
          // A differing report is what this run reports itself (status and diff); other warnings are problems.
          if (message.messageId === 'console-api-report-diff') {
            diff = message.text;
            return;
          }
          if (
            message.messageId === 'console-api-report-not-copied' ||
            message.messageId === 'console-api-report-copied' ||
            message.messageId === 'console-api-report-created'
          ) {
            return;
          }
          if (
            message.logLevel === ExtractorLogLevel.Error ||
            message.logLevel === ExtractorLogLevel.Warning
          ) {
            problems.push(message.formatMessageWithLocation(root));
          }
        },
      });
      const status = !existed ? 'missing' : result.apiReportChanged ? 'changed' : 'same';
      // Temp files of entries with the same name (index) in different packages would collide; drop each after use.
      rmSync(join(temp, `${entry.entry}.api.md`), { force: true });
      return { ...entry, status, problems, ...(diff === undefined ? {} : { diff }) };
    });
    const written = new Set(results.map((r) => r.report));
    const stale: string[] = [];
    for (const folder of new Set(entries.map((e) => dirname(e.report)))) {
      if (!existsSync(folder)) continue;
      for (const file of readdirSync(folder)) {
        const path = join(folder, file);
        if (!file.endsWith('.api.md') || written.has(path)) continue;
        stale.push(relative(root, path));
        if (update) rmSync(path);
      }
    }
    return { entries: results, stale };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

function main(): void {
  const update = process.argv.includes('--update');
  const run = runApiReports({ update });
  let failed = false;
  for (const r of run.entries) {
    const label = `${r.name}${r.entry === 'index' ? '' : ` (${r.entry})`}: ${relative(root, r.report)}`;
    for (const problem of r.problems) console.error(`${label}: ${problem}`);
    if (r.problems.length > 0) failed = true;
    if (r.status === 'same') {
      console.log(`${label}: unchanged`);
    } else if (update) {
      console.log(`${label}: ${r.status === 'missing' ? 'written' : 'updated'}`);
    } else {
      failed = true;
      console.error(`${label}: ${r.status === 'missing' ? 'no report' : 'differs from the build'}`);
      if (r.diff) console.error(r.diff);
    }
  }
  for (const path of run.stale) {
    console.log(`${path}: ${update ? 'deleted (no entry point writes it)' : 'no entry point writes it'}`);
    if (!update) failed = true;
  }
  if (failed && !update) {
    console.error(
      '\nA public API changed. If the change is intended: pnpm build && pnpm api:update, and commit the reports.',
    );
  }
  if (failed) process.exitCode = 1;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main();
