/**
 * One call of the HTTP/1.1 rows of `pnpm bench:hostile`, alone in its process (started with
 * --expose-gc so the baseline is live memory): our HTTP transport (Node sockets or the fetch build)
 * or plain undici `fetch` reading the events itself, against one hostile HTTP/1.1 server
 * (test/reliability/support/hostile-http1.ts). A first call warms the process up; the second is
 * measured. Prints one JSON line: how the call ended, after how long, and the most memory it took.
 */
// Each build by its source file: tsx maps '@trtllm/http' to the fetch build (tsconfig paths).

import { type Transport, TritonLlmError } from '@trtllm/sdk';
import { httpTransport as fetchHttpTransport } from '../../packages/http/src/index.js';
import { httpTransport as nodeHttpTransport } from '../../packages/http/src/node.js';
import { HOSTILE_HTTP1_PATH, HOSTILE_HTTP1_REQUEST } from '../../test/reliability/support/hostile-http1.js';
import { sampleMemoryPeak } from '../../test/reliability/support/memory-peak.js';

export interface Http1Job {
  readonly client: 'ours-node' | 'ours-fetch' | 'undici-fetch';
  /** The URL of a server whose first request gets the scenario: the warm-up call is made elsewhere. */
  readonly url: string;
  /** A server answering validly, for the warm-up call. */
  readonly warmUrl: string;
  readonly deadlineMs: number;
}

export interface Http1Run {
  readonly outcome: string;
  readonly ms: number;
  readonly heapBytes: number;
  readonly rssBytes: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as Http1Job;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

function describe(err: unknown): string {
  if (err instanceof TritonLlmError) return `${err.code}: ${err.message}`;
  if (!(err instanceof Error)) return String(err);
  const causes: string[] = [];
  for (let e: unknown = err; e instanceof Error && causes.length < 3; e = e.cause)
    causes.push(`${e.name}: ${e.message}`);
  return causes.join(' <- ');
}

async function ours(url: string, build: 'node' | 'fetch'): Promise<string> {
  const make = build === 'node' ? nodeHttpTransport : fetchHttpTransport;
  const transport: Transport = make({ baseUrl: url });
  try {
    let n = 0;
    for await (const _ of transport.stream(HOSTILE_HTTP1_REQUEST, { timeoutMs: job.deadlineMs })) n += 1;
    return `ok (${n} responses)`;
  } catch (err) {
    return describe(err);
  } finally {
    await transport.close();
  }
}

/**
 * What an application without our transport does: fetch, then the body's text split at blank
 * lines (no limit: fetch has none of its own).
 */
async function undici(url: string): Promise<string> {
  try {
    const response = await fetch(`${url}${HOSTILE_HTTP1_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text_input: 'What is HTTP/1.1?', max_tokens: 16, stream: true }),
      signal: AbortSignal.timeout(job.deadlineMs),
    });
    if (!response.ok) return `HTTP ${response.status}: ${(await response.text()).slice(0, 80)}`;
    let n = 0;
    let text = '';
    const decoder = new TextDecoder();
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      text += decoder.decode(r.value, { stream: true });
      for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
        const event = text.slice(0, end);
        text = text.slice(end + 2);
        n += 1;
        if (event.includes('"error"')) {
          await reader.cancel();
          return `error event: ${event.slice(0, 80)}`;
        }
      }
    }
    return `ok (${n} events)`;
  } catch (err) {
    return describe(err);
  }
}

const run = (url: string) =>
  job.client === 'undici-fetch' ? undici(url) : ours(url, job.client === 'ours-node' ? 'node' : 'fetch');

await run(job.warmUrl);
gc();
const peak = sampleMemoryPeak();
const started = performance.now();
const outcome = await run(job.url);
const ms = performance.now() - started;
const { heapBytes, rssBytes } = peak.stop();
console.log(
  JSON.stringify({ outcome: outcome.replaceAll(job.url, 'URL'), ms, heapBytes, rssBytes } satisfies Http1Run),
);
process.exit(0);
