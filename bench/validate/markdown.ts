/**
 * The validation block of docs/PERFORMANCE.md: what ran, the figures of each tool at each level, and
 * every difference beyond the tolerance with its cause (the ratios themselves stay in the results file).
 */
import { markdownTable as table, writeGeneratedBlock } from '../markdown.js';
import { explainDifferences } from './explain.js';
import type { LevelFigures } from './figures.js';
import type { ValidateResults } from './results.js';

const START = '<!-- validate-results:start (written by pnpm bench:validate; edits inside are lost) -->';
const END = '<!-- validate-results:end -->';

const ms = (v: number | undefined) =>
  v === undefined || !Number.isFinite(v) ? 'n/a' : v.toFixed(v < 20 ? 2 : 1);
const rate = (v: number) => v.toFixed(v < 100 ? 2 : 0);

function figureRows(figures: readonly LevelFigures[], label: (f: LevelFigures) => string): string[][] {
  return figures.map((f) => {
    const mark = (metric: string, text: string) => (f.derived?.includes(metric) ? `${text}*` : text);
    return [
      label(f),
      String(f.concurrency),
      mark('TTFT p50', ms(f.ttftMs?.p50)),
      mark('TTFT p99', ms(f.ttftMs?.p99)),
      mark('ITL p50', ms(f.itlMs?.p50)),
      mark('ITL p99', ms(f.itlMs?.p99)),
      mark('E2E p50', ms(f.e2eMs.p50)),
      mark('E2E p99', ms(f.e2eMs.p99)),
      mark('requests/s', rate(f.requestThroughput)),
      mark('output tokens/s', rate(f.outputTokenThroughput)),
      f.outputTokensPerRequest.toFixed(1),
      f.serverMs === undefined ? '' : ms(f.serverMs.p50),
    ];
  });
}

const FIGURE_HEAD = [
  'tool',
  'conc.',
  'TTFT p50 ms',
  'TTFT p99 ms',
  'ITL p50 ms',
  'ITL p99 ms',
  'E2E p50 ms',
  'E2E p99 ms',
  'req/s',
  'output tok/s',
  'tokens/req',
  'server p50 ms',
];

/** Within 2 % of the delays the fake injects (the bench's accuracy bar), per tool and level. */
const TRUTH_TOLERANCE = 0.02;

/** Against the delays the fake injects: each tool's p50s as a range of deviations over the levels. */
function truthLine(
  r: ValidateResults,
  own: readonly LevelFigures[],
  reconciled: readonly LevelFigures[],
): string[] {
  const { ttftMs, itlMs } = r.config;
  const range = (
    figures: readonly LevelFigures[],
    pick: (f: LevelFigures) => number | undefined,
    injected: number,
  ) => {
    const off = figures
      .map(pick)
      .filter((v): v is number => v !== undefined && Number.isFinite(v) && injected > 0)
      .map((v) => v / injected - 1);
    if (off.length === 0) return 'n/a';
    const lo = Math.min(...off);
    const hi = Math.max(...off);
    const pct = (v: number) => {
      const text = (v * 100).toFixed(1);
      return text === '0.0' || text === '-0.0' ? '0.0 %' : `${v > 0 ? '+' : ''}${text} %`;
    };
    const text = pct(lo) === pct(hi) ? pct(lo) : `${pct(lo)} to ${pct(hi)}`;
    return Math.max(Math.abs(lo), Math.abs(hi)) > TRUTH_TOLERANCE ? `**${text}**` : text;
  };
  // genai-perf's own ITL re-tokenizes the text; its one-token-per-response figures stand for it.
  const tools: [string, LevelFigures[]][] = [
    ...['trtllm-bench', 'perf_analyzer'].map((t): [string, LevelFigures[]] => [
      t,
      own.filter((f) => f.tool === t),
    ]),
    ['genai-perf (1 token/response)', [...reconciled]],
  ];
  const parts = tools
    .filter(([, figures]) => figures.length > 0)
    .map(
      ([tool, figures]) =>
        `${tool} ${range(figures, (f) => f.ttftMs?.p50, ttftMs)} / ${range(figures, (f) => f.itlMs?.p50, itlMs)}`,
    );
  return [
    `**Against the injected truth** (${ttftMs} ms to the first token, ${itlMs} ms between tokens), the p50s of ` +
      `time to first token / inter-token latency over the levels (bold: more than ${TRUTH_TOLERANCE * 100} % off): ` +
      `${parts.join('; ')}.`,
    '',
  ];
}

/** The generated block. */
export function validationMarkdown(r: ValidateResults): string {
  const versions = Object.entries(r.versions)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const parts: string[] = [
    START,
    `Measured ${r.date.slice(0, 10)} on ${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node} ` +
      `(1-minute load average ${r.machine.loadAverage[0]} at the start: the machine is shared); ` +
      `${r.durationS} s in all. Peers: ${versions || 'none'}. Every tool sent the same ${r.config.prompts.length} prompts ` +
      `(round-robin) to \`ensemble\` over gRPC, streaming, \`max_tokens\` ${r.config.maxTokens}, closed loop, ` +
      `max(${r.config.requests}, 8 x concurrency) measured requests after max(8, 2 x concurrency) warm-up ones per level, ` +
      `one tool after another. genai-perf counted tokens with ${r.tokenizer.replace(', for genai-perf', '')}.`,
    '',
  ];
  for (const [server, description] of Object.entries(r.servers)) {
    const own = r.figures.filter((f) => f.server === server);
    const order = ['trtllm-bench', 'genai-perf', 'perf_analyzer'];
    const sorted = [...own].sort(
      (a, b) => a.concurrency - b.concurrency || order.indexOf(a.tool) - order.indexOf(b.tool),
    );
    const reconciled = r.reconciled.filter((f) => f.server === server);
    parts.push(
      `#### ${server === 'fake' ? 'Fake Triton' : 'Real Triton'}`,
      '',
      `${description}.`,
      '',
      table(
        FIGURE_HEAD,
        figureRows(sorted, (f) => f.tool),
      ),
      '',
    );
    if (server === 'fake') parts.push(...truthLine(r, sorted, reconciled));
    if (server === 'fake' && r.clientPath.length > 0) {
      const levels = [...new Set(r.clientPath.map((c) => c.concurrency))];
      const at = (transport: string, level: number) =>
        ms(r.clientPath.find((c) => c.transport === transport && c.concurrency === level)?.ttftMs.p50);
      parts.push(
        '**Client path**: `TritonLlm.stream()` over the gRPC transport, timed like trtllm-bench, time to first ' +
          'token p50 with one `ModelStreamInfer` call per request (as trtllm-bench builds it) / with every ' +
          'request on one shared call (`multiplex: { calls: 1 }`): ' +
          `${levels.map((l) => `${at('call per request', l)} / ${at('multiplexed', l)} ms at ${l}`).join(', ')}.`,
        '',
      );
    }
  }
  parts.push(
    "\\* computed here from the tool's own per-request timestamps (its profile export), not reported by the tool. " +
      '"server p50": the real Triton\'s own generation time per request during that tool\'s run (received to ' +
      'completed in its `tensorrt_llm` event log, warm-up included).',
    '',
  );
  parts.push(
    '#### Differences beyond ' + `${Math.round(r.config.tolerance * 100)} %`,
    '',
    `Every other figure of ours is within ${Math.round(r.config.tolerance * 100)} % of both peers ` +
      '(each ratio is in `bench/results/validate.json`, `comparisons`).',
    '',
    explainDifferences(r),
    '',
  );
  if (r.skipped.length > 0) {
    parts.push('#### Skipped', '', ...r.skipped.map((s) => `- ${s.what}: ${s.reason.split('\n')[0]}`), '');
  }
  parts.push(END);
  return parts.join('\n');
}

/** Replaces the block in `path` (or appends it), keeping everything around it. */
export function writeValidationMarkdown(path: string, r: ValidateResults): Promise<void> {
  return writeGeneratedBlock(path, { start: START, end: END }, validationMarkdown(r));
}

const SUMMARY_START =
  '<!-- validate-summary:start (written by pnpm bench:validate; edits inside are lost) -->';
const SUMMARY_END = '<!-- validate-summary:end -->';

/** The README's validation table: medians and throughput per server, level and tool. */
export function summaryMarkdown(r: ValidateResults): string {
  const order = ['trtllm-bench', 'genai-perf', 'perf_analyzer'];
  const rows = [...r.figures]
    .sort(
      (a, b) =>
        a.server.localeCompare(b.server) ||
        a.concurrency - b.concurrency ||
        order.indexOf(a.tool) - order.indexOf(b.tool),
    )
    .map((f) => [
      f.server === 'fake' ? 'fake Triton' : 'real Triton (CPU)',
      String(f.concurrency),
      f.tool,
      ms(f.ttftMs?.p50),
      ms(f.itlMs?.p50),
      ms(f.e2eMs.p50),
      rate(f.requestThroughput),
      rate(f.outputTokenThroughput),
      f.outputTokensPerRequest.toFixed(1),
    ]);
  return [
    SUMMARY_START,
    `Measured ${r.date.slice(0, 10)} by \`pnpm bench:validate\` (\`ensemble\`, gRPC, streaming, \`max_tokens\` ` +
      `${r.config.maxTokens}; both servers inject ${r.config.ttftMs} ms to the first token and ${r.config.itlMs} ms ` +
      'between tokens). genai-perf counts tokens by re-tokenizing the streamed text with a different vocabulary, ' +
      'hence its lower tokens/s and higher inter-token latency; perf_analyzer does not report TTFT or ITL (computed ' +
      'from its export). Ratios and the cause of every difference above 5 %: docs/PERFORMANCE.md.',
    '',
    table(
      [
        'server',
        'conc.',
        'tool',
        'TTFT p50 ms',
        'ITL p50 ms',
        'E2E p50 ms',
        'req/s',
        'output tok/s',
        'tokens/req',
      ],
      rows,
    ),
    SUMMARY_END,
  ].join('\n');
}

/** Replaces the README's summary block (or appends it to the end of the Benchmarks section, the last one). */
export function writeReadmeSummary(path: string, r: ValidateResults): Promise<void> {
  return writeGeneratedBlock(path, { start: SUMMARY_START, end: SUMMARY_END }, summaryMarkdown(r));
}
