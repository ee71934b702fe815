/**
 * Every difference beyond the tolerance, with its cause, argued from the tools' definitions and
 * from evidence measured in the same run. A difference no rule accounts for is listed as
 * unexplained, never dropped.
 */
import type { Comparison } from './compare.js';
import type { LevelFigures } from './figures.js';
import type { ValidateResults } from './results.js';

type Cause = 'counting' | 'window' | 'client-path' | 'server-slower' | 'saturated' | 'tail' | 'unexplained';

const TITLES: Readonly<Record<Cause, string>> = {
  counting: 'genai-perf counts tokens by re-tokenizing text (a definition, not a timing difference)',
  window: "perf_analyzer's throughput window ends at a whole-second check (a definition)",
  'client-path':
    'Ours: time our client spends before a request reaches the server (a gRPC call per request where the transport is not multiplexed, and the JavaScript work of the other streams)',
  'server-slower':
    "The real Triton itself generated more slowly during that tool's run (its own event log), on a 2-core machine it shares with the client and with other work",
  saturated:
    'Run-to-run spread of the real Triton on this shared 2-core machine: the two peers disagree with each other as much',
  tail: 'Tail percentiles of a few dozen requests on a shared machine (the medians agree)',
  unexplained: 'Not accounted for by a definition: look at these',
};

const pct = (r: number) => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(1)} %`;
const n1 = (v: number) => v.toFixed(1);

function figure(r: ValidateResults, tool: string, server: string, level: number): LevelFigures | undefined {
  return r.figures.find((f) => f.tool === tool && f.server === server && f.concurrency === level);
}

function comparison(r: ValidateResults, c: Comparison, peer: Comparison['peer']): Comparison | undefined {
  return r.comparisons.find(
    (x) =>
      x.peer === peer && x.server === c.server && x.concurrency === c.concurrency && x.metric === c.metric,
  );
}

/** The two peers against each other on one metric (perf_analyzer over genai-perf's reconciled figures). */
function peerSpread(r: ValidateResults, c: Comparison): number | undefined {
  const pa = comparison(r, c, 'perf_analyzer');
  const gp = comparison(r, c, 'genai-perf, 1 token per response');
  return pa === undefined || gp === undefined ? undefined : pa.theirs / gp.theirs;
}

function cause(r: ValidateResults, c: Comparison): Cause {
  const tokenMetric = c.metric.startsWith('ITL') || c.metric === 'output tokens/s';
  // A factor of two or more on these metrics is the token count; the evidence shows what is left.
  if (c.peer === 'genai-perf' && tokenMetric) return 'counting';
  if (c.peer === 'perf_analyzer' && (c.metric === 'requests/s' || c.metric === 'output tokens/s')) {
    const pa = figure(r, 'perf_analyzer', c.server, c.concurrency);
    const own = pa !== undefined && pa.spanS !== undefined ? pa.requests / pa.requestThroughput : undefined;
    if (own !== undefined && pa?.spanS !== undefined && own > pa.spanS * (1 + r.config.tolerance))
      return 'window';
  }
  if (c.server === 'triton' && c.peer !== 'genai-perf, 1 token per response') {
    const mine = figure(r, 'trtllm-bench', c.server, c.concurrency)?.serverMs?.p50;
    const theirs = figure(r, c.peer, c.server, c.concurrency)?.serverMs?.p50;
    if (mine !== undefined && theirs !== undefined) {
      // Throughputs fall as the server slows; latencies grow.
      const server = c.metric.endsWith('/s') ? theirs / mine : mine / theirs;
      const sameWay = (server - 1) * (c.ratio - 1) > 0;
      if (sameWay && Math.abs(server - 1) >= Math.abs(c.ratio - 1) / 3 && !c.metric.startsWith('TTFT')) {
        return 'server-slower';
      }
    }
  }
  const spread = peerSpread(r, c);
  if (r.servers.triton !== undefined && c.server === 'triton' && spread !== undefined) {
    if (Math.abs(spread - 1) > r.config.tolerance) return 'saturated';
  }
  // A tail alone (the p50 agrees) is a handful of slow requests among a few dozen: noise first.
  if (c.metric.endsWith('p99')) {
    const median = r.comparisons.find(
      (x) =>
        x.peer === c.peer &&
        x.server === c.server &&
        x.concurrency === c.concurrency &&
        x.metric === c.metric.replace('p99', 'p50'),
    );
    if (median !== undefined && !median.beyond) return 'tail';
  }
  if (c.metric.startsWith('TTFT') || c.metric.startsWith('E2E')) {
    const rows = r.clientPath.filter((p) => p.concurrency === c.concurrency);
    const perCall = rows.find((p) => p.transport === 'call per request');
    const mux = rows.find((p) => p.transport === 'multiplexed');
    const key = c.metric.startsWith('TTFT') ? 'ttftMs' : 'e2eMs';
    const tail = c.metric.endsWith('p99') ? 'p99' : 'p50';
    // Ours is later while the server's own time is not: the time is spent in our client.
    if (perCall !== undefined && mux !== undefined && c.ratio > 1 && perCall[key][tail] > mux[key][tail]) {
      return 'client-path';
    }
  }
  return 'unexplained';
}

function evidence(r: ValidateResults, why: Cause, c: Comparison): string {
  switch (why) {
    case 'counting': {
      const gp = figure(r, 'genai-perf', c.server, c.concurrency);
      const ours = figure(r, 'trtllm-bench', c.server, c.concurrency);
      const fixed = comparison(r, c, 'genai-perf, 1 token per response');
      return (
        `genai-perf counted ${n1(gp?.outputTokensPerRequest ?? Number.NaN)} tokens per request, the server generated ` +
        `${n1(ours?.outputTokensPerRequest ?? Number.NaN)}; with one token per response its own timestamps give ` +
        `${pct(fixed?.ratio ?? Number.NaN)}`
      );
    }
    case 'window': {
      const pa = figure(r, 'perf_analyzer', c.server, c.concurrency)!;
      return (
        `${pa.requests} requests / ${pa.requestThroughput.toFixed(2)} req/s = a ` +
        `${n1(pa.requests / pa.requestThroughput)} s window, for requests that took ${(pa.spanS ?? 0).toFixed(2)} s by its own timestamps`
      );
    }
    case 'client-path': {
      const rows = r.clientPath.filter((p) => p.concurrency === c.concurrency);
      const key = c.metric.startsWith('TTFT') ? 'ttftMs' : 'e2eMs';
      const tail = c.metric.endsWith('p99') ? 'p99' : 'p50';
      const at = (t: string) => rows.find((p) => p.transport === t)?.[key][tail] ?? Number.NaN;
      const pa = figure(r, 'perf_analyzer', 'fake', c.concurrency);
      const paValue = key === 'ttftMs' ? pa?.ttftMs?.[tail] : pa?.e2eMs[tail];
      return (
        `on the fake in the same run, SDK over gRPC ${n1(at('call per request'))} ms with a call per request, ` +
        `${n1(at('multiplexed'))} ms multiplexed; perf_analyzer ${n1(paValue ?? Number.NaN)} ms`
      );
    }
    case 'server-slower': {
      const mine = figure(r, 'trtllm-bench', c.server, c.concurrency)?.serverMs?.p50 ?? Number.NaN;
      const theirs = figure(r, c.peer, c.server, c.concurrency)?.serverMs?.p50 ?? Number.NaN;
      return (
        `the server's own generation p50 was ${n1(mine)} ms during ours, ${n1(theirs)} ms during ${c.peer}'s ` +
        `(${pct(mine / theirs)}); what is left is our client's time (client path)`
      );
    }
    case 'saturated': {
      const spread = peerSpread(r, c) ?? Number.NaN;
      return `perf_analyzer vs genai-perf (1 token/response) on the same metric: ${pct(spread)}`;
    }
    case 'tail': {
      const f = figure(r, 'trtllm-bench', c.server, c.concurrency);
      return `p50 within tolerance; p99 of ${f?.requests ?? '?'} requests`;
    }
    default:
      return '';
  }
}

/** Where the differences of one cause are: each metric against its peer, the servers and the levels. */
function where(items: readonly Comparison[]): string {
  const unique = (values: readonly string[]) => [...new Set(values)].join(', ');
  return (
    `${unique(items.map((c) => `${c.metric} vs ${c.peer}`))}; ` +
    `${unique(items.map((c) => c.server))} at ${unique(items.map((c) => String(c.concurrency)))} streams`
  );
}

/**
 * Markdown: one paragraph per cause, saying where its differences are, with the first one's numbers
 * and evidence as the example. Unexplained differences are listed one by one: those are the ones
 * to look at.
 */
export function explainDifferences(r: ValidateResults): string {
  const beyond = r.comparisons.filter((c) => c.beyond && c.peer !== 'genai-perf, 1 token per response');
  if (beyond.length === 0) return 'None: every figure of ours is within the tolerance of both peers.';
  const groups = new Map<Cause, { c: Comparison; line: string }[]>();
  for (const c of beyond) {
    const why = cause(r, c);
    const line =
      `${c.server}, ${c.concurrency}, ${c.metric} vs ${c.peer}: ours ${c.ours.toFixed(2)}, theirs ` +
      `${c.theirs.toFixed(2)} (${pct(c.ratio)}${c.derived ? ', theirs computed from its export' : ''}); ${evidence(r, why, c)}`;
    groups.set(why, [...(groups.get(why) ?? []), { c, line }]);
  }
  const order: Cause[] = [
    'client-path',
    'counting',
    'window',
    'server-slower',
    'saturated',
    'tail',
    'unexplained',
  ];
  return order
    .filter((k) => groups.has(k))
    .map((k) => {
      const items = groups.get(k)!;
      const head = `**${TITLES[k]}** (${items.length}): ${where(items.map((i) => i.c))}.`;
      return k === 'unexplained'
        ? [head, '', ...items.map((i) => `- ${i.line}`)].join('\n')
        : `${head} For example, ${items[0]!.line}.`;
    })
    .join('\n\n');
}
