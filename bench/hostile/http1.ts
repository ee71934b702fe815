/**
 * The HTTP/1.1 rows of `pnpm bench:hostile`: our HTTP transport on the Node sockets and on the
 * fetch build, beside plain undici `fetch` reading the same events, against the hostile HTTP/1.1
 * server of the reliability tests (test/reliability/support/hostile-http1.ts). Each call runs in a
 * child process of its own (bench/hostile/http1-client.ts) against a fresh server in this one.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  HTTP1_SCENARIO_NAMES,
  type Http1ScenarioName,
  startHostileHttp1Server,
} from '../../test/reliability/support/hostile-http1.js';
import { markdownTable } from '../markdown.js';
import type { Http1Job, Http1Run } from './http1-client.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLIENT = join(ROOT, 'bench', 'hostile', 'http1-client.ts');
export const HTTP1_DEADLINE_MS = 10_000;
// The one-byte-per-second server is ended by the deadline: a short one, as in the tests.
const SHORT_DEADLINE_MS = 1_500;
const KILL_AFTER_MS = 2 * HTTP1_DEADLINE_MS + 15_000;

/** What each scenario's server does, for the table's readers. */
export const HTTP1_WHAT: Record<Http1ScenarioName, string> = {
  'endless-headers': 'a status line, then 1 KiB header lines as fast as the socket takes them',
  'endless-line': 'a valid event-stream head, then one `data:` line that never ends, in 64 KiB chunks',
  'huge-chunk-size': 'a chunk announced as `FFFFFFFFFF` (1 TiB) bytes, then a `data:` line filling it',
  'garbage-chunk-size': 'a chunk size line `zz`',
  'short-content-length': 'Content-Length 5, then a whole event (longer), the connection left open',
  'long-content-length': 'Content-Length 100000, one event, then close',
  'close-mid-chunk': 'a chunk of 256 bytes, 10 of them sent, then close',
  'million-tiny-events': 'a million SSE comment events (`:` and a blank line), then an error event',
  'te-and-content-length': 'Transfer-Encoding chunked and Content-Length together (the smuggling shape)',
  'http10-no-length': 'an HTTP/1.0 answer without a length: one event, half of the next, then close',
  'one-byte-per-second': `a valid answer, one byte per second (the call's deadline is ${SHORT_DEADLINE_MS / 1000} s)`,
  'unsolicited-second-response':
    'a 503 with its body and, in the same write, a 200 event stream nobody asked for',
  'not-http': 'an SSH greeting instead of HTTP',
  'http2-server': "an HTTP/2 server's SETTINGS frame and GOAWAY (Triton's gRPC port)",
};

const CLIENTS: readonly Http1Job['client'][] = ['ours-node', 'ours-fetch', 'undici-fetch'];

export interface Http1Row {
  readonly scenario: Http1ScenarioName;
  readonly runs: Readonly<Record<Http1Job['client'], Http1Run>>;
}

async function measure(scenario: Http1ScenarioName, client: Http1Job['client']): Promise<Http1Run> {
  const server = await startHostileHttp1Server(scenario);
  // The warm-up call goes to a server whose every answer after the first is valid.
  const warm = await startHostileHttp1Server('not-http');
  const deadlineMs = scenario === 'one-byte-per-second' ? SHORT_DEADLINE_MS : HTTP1_DEADLINE_MS;
  const job: Http1Job = { client, url: server.url, warmUrl: warm.url, deadlineMs };
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', CLIENT, JSON.stringify(job)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.on('error', () => undefined);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('exit', (c, s) => resolve([c, s])),
  );
  clearTimeout(killer);
  await server.close();
  await warm.close();
  try {
    return JSON.parse(out.trim().split('\n').at(-1) ?? '') as Http1Run;
  } catch {
    const outcome =
      signal !== null
        ? `no result within ${KILL_AFTER_MS / 1000} s (killed)`
        : `crash: exit ${code}: ${err.trim().split('\n').slice(0, 2).join(' ')}`;
    return { outcome, ms: Number.NaN, heapBytes: Number.NaN, rssBytes: Number.NaN };
  }
}

/** Runs every scenario (or those in `only`) against the three clients, printing each row. */
export async function runHttp1Rows(only: readonly string[] | undefined): Promise<Http1Row[]> {
  const rows: Http1Row[] = [];
  for (const scenario of HTTP1_SCENARIO_NAMES.filter((s) => only === undefined || only.includes(s))) {
    const runs = {} as Record<Http1Job['client'], Http1Run>;
    for (const client of CLIENTS) runs[client] = await measure(scenario, client);
    rows.push({ scenario, runs });
    console.log(
      `${scenario} (HTTP/1.1)\n${CLIENTS.map((c) => `  ${c.padEnd(13)} ${runs[c].outcome.slice(0, 100)} | ${ms(runs[c].ms)} | ${rss(runs[c])}`).join('\n')}`,
    );
  }
  return rows;
}

function ms(value: number): string {
  if (!Number.isFinite(value)) return '-';
  return value >= 1000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

function rss(r: Http1Run): string {
  if (!Number.isFinite(r.rssBytes)) return '-';
  const mib = r.rssBytes / 2 ** 20;
  return `${mib >= 0 ? '+' : ''}${mib.toFixed(1)} MiB`;
}

/** The error's code and the gist of its message, short enough for a cell. */
function outcomeCell(outcome: string): string {
  const short = outcome.replace(/POST \/v2\/models\/ensemble\/generate_stream:? ?/, '');
  const cut = short.length > 110 ? `${short.slice(0, 107)}...` : short;
  return cut.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
}

/** The table of the rows: per client, the outcome, time to it and peak RSS growth. */
export function http1Table(rows: readonly Http1Row[]): string {
  return markdownTable(
    [
      'scenario',
      'Node sockets: outcome',
      'time',
      'RSS',
      'fetch build: outcome',
      'time',
      'RSS',
      'undici `fetch`: outcome',
      'time',
      'RSS',
    ],
    rows.map((r) => [
      r.scenario,
      ...CLIENTS.flatMap((c) => [outcomeCell(r.runs[c].outcome), ms(r.runs[c].ms), rss(r.runs[c])]),
    ]),
  );
}
