import { writeFile } from 'node:fs/promises';
import { type Tokenizer, TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import { loadTokenizer } from '@trtllm/tokenizers';
import { Command, CommanderError, Option } from 'commander';
import { renderChartSvg } from './chart.js';
import { loadPrompts } from './dataset.js';
import { writeReport } from './export.js';
import { DEFAULT_MAX_TOKENS } from './options.js';
import { progressHooks } from './progress.js';
import { runBenchmark } from './run.js';
import { renderTable } from './table.js';

/** Where the CLI writes: the table to `stdout`, progress and errors to `stderr`. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

interface CliFlags {
  url?: string;
  protocol: 'grpc' | 'http';
  model: string;
  concurrency: string;
  inputData: string;
  requestRate?: string;
  numRequests?: string;
  warmup: string;
  streaming?: boolean;
  maxTokens: string;
  tokenizer?: string;
  export?: string;
  chart: string | false;
  progress: boolean;
}

const DEFAULT_URLS = { grpc: 'localhost:8001', http: 'localhost:8000' } as const;

function command(io: CliIo): Command {
  return new Command('trtllm-bench')
    .description(
      'Measure time to first token, inter-token and end-to-end latency, throughput and accuracy of a ' +
        'TensorRT-LLM model served by Triton, at one or more concurrency levels.',
    )
    .option(
      '-u, --url <url>',
      'server address: host:port, grpc://, grpcs://, dns:host:port, http(s):// (default: localhost:8001 for grpc, localhost:8000 for http)',
    )
    .addOption(
      new Option('-i, --protocol <protocol>', 'wire protocol').choices(['grpc', 'http']).default('grpc'),
    )
    .option('-m, --model <name>', 'model to call', 'ensemble')
    .option('--concurrency <levels>', 'comma-separated concurrency levels, e.g. 1,4,16,64', '1')
    .requiredOption(
      '--input-data <file>',
      'JSONL prompts: {"input": "...", "output": "expected (optional)"} per line',
    )
    .option(
      '--request-rate <n>',
      'requests per second (open loop, capped by the concurrency); default: closed loop',
    )
    .option(
      '--num-requests <n>',
      'measured requests per level (default: 100, or 4 per concurrency slot if more)',
    )
    .option('--warmup <n>', 'unmeasured requests before each level', '0')
    .option('--streaming', 'stream tokens (needed for time to first token and inter-token latency)')
    .option('--max-tokens <n>', 'max tokens per request', String(DEFAULT_MAX_TOKENS))
    .option(
      '--tokenizer <dir>',
      'directory with tokenizer.json: count tokens with it (and drive the raw model)',
    )
    .option('--export <file>', 'write the results to a .json or .csv file')
    .option('--chart <file>', 'SVG chart of throughput against latency', 'trtllm-bench-chart.svg')
    .option('--no-chart', 'do not write the chart')
    .option('--no-progress', 'do not draw the progress bar')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });
}

/**
 * Runs the CLI on `argv` (without the node and script entries) and resolves to its exit code: 0 on
 * success, 2 for bad arguments or input data, 1 when the server could not be benchmarked.
 */
export async function main(argv: readonly string[], io: CliIo = process): Promise<number> {
  const program = command(io);
  try {
    program.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    throw err;
  }
  const flags = program.opts<CliFlags>();
  const progress = flags.progress ? progressHooks(io.stderr) : undefined;
  try {
    const prompts = await loadPrompts(flags.inputData);
    const tokenizer: Tokenizer | undefined =
      flags.tokenizer !== undefined ? await loadTokenizer(flags.tokenizer) : undefined;
    const requestRate =
      flags.requestRate !== undefined ? number('request-rate', flags.requestRate) : undefined;
    const numRequests =
      flags.numRequests !== undefined ? integer('num-requests', flags.numRequests) : undefined;
    const report = await runBenchmark(
      {
        url: withScheme(flags.url ?? DEFAULT_URLS[flags.protocol]),
        protocol: flags.protocol,
        model: flags.model,
        prompts,
        concurrency: flags.concurrency.split(',').map((c) => integer('concurrency', c.trim())),
        warmup: integer('warmup', flags.warmup),
        streaming: flags.streaming === true,
        maxTokens: integer('max-tokens', flags.maxTokens),
        ...(requestRate !== undefined ? { requestRate } : {}),
        ...(numRequests !== undefined ? { numRequests } : {}),
        ...(tokenizer !== undefined ? { tokenizer } : {}),
      },
      progress ?? {},
    );
    io.stdout.write(`${renderTable(report)}\n`);
    if (flags.export !== undefined) {
      await writeReport(flags.export, report);
      io.stdout.write(`results written to ${flags.export}\n`);
    }
    if (flags.chart !== false) {
      await writeFile(flags.chart, renderChartSvg(report), 'utf8');
      io.stdout.write(`chart written to ${flags.chart}\n`);
    }
    return 0;
  } catch (err) {
    progress?.stop();
    const e = TritonLlmError.from(err);
    io.stderr.write(`trtllm-bench: ${e.code}: ${e.message}\n`);
    return e.code === 'invalid_argument' ? 2 : 1;
  }
}

/** `host:port` as the CLI has always taken it; an address with a scheme (or a `dns:` target) as it is. */
function withScheme(url: string): string {
  return /^(?:[a-z][a-z0-9+.-]*:\/\/|dns:)/i.test(url) ? url : `http://${url}`;
}

function integer(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isSafeInteger(n))
    throw invalidArgument(flag, value, 'must be a whole number');
  return n;
}

function number(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw invalidArgument(flag, value, 'must be a number');
  return n;
}
