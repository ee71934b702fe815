import { httpTransport as nodeHttpTransport } from '@trtllm/http';
import {
  type ErrorCode,
  type InferResponse,
  type Transport,
  TritonLlmError,
  tensorStrings,
} from '@trtllm/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_RECEIVE_BYTES } from '../../packages/grpc/src/transport/endpoint.js';
// The fetch build, as browsers, Deno, Bun and edge workers load it: every call over fetch.
import { httpTransport as fetchHttpTransport } from '../../packages/http/src/index.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../../packages/http/src/options.js';
import { liveBytes, MiB } from './support/heap.js';
import {
  HOSTILE_HTTP1_REQUEST,
  type HostileHttp1Server,
  type Http1ScenarioName,
  startHostileHttp1Server,
} from './support/hostile-http1.js';
import { sampleMemoryPeak } from './support/memory-peak.js';

// Issue 55: nothing an HTTP/1.1 server sends may cost more than a typed error, within 3 s, and
// memory under the limit plus 16 MiB; the transport works again on the next call.
const DEADLINE_MS = 10_000;
const WITHIN_MS = 3_000;
const SLACK = 16 * MiB;
// The fetch build's peak is sampled live (a sample that would raise it is taken again after a GC):
// undici allocates each read twice (the socket's buffer and the stream's chunk) and drops one,
// and how much of that garbage V8 lets pile up before collecting it is V8's choice (+24 to +33 MiB
// over the limit seen in CI runs), not the client's. Live, the fetch build still holds what undici
// read ahead of the client's reader: +1 to +13 MiB over the limit measured (Node 22 and 24, 5 runs
// each case), 0 to +17 in 10 runs under load, and once +34 in a whole unit run (2026-11-30), past
// the 32 that SLACK and 16 MiB of read-ahead allowed. Allowed as UNDICI_READ_AHEAD, 24 MiB: the bound
// stays a fixed size while the server sends without end; the Node build has no such layer.
const UNDICI_READ_AHEAD = 24 * MiB;
// The one-byte-per-second server is ended by the call's deadline: a short one.
const SHORT_DEADLINE_MS = 1_500;

const BUILDS = {
  'Node sockets': nodeHttpTransport,
  fetch: fetchHttpTransport,
} as const;
type Build = keyof typeof BUILDS;

const servers: HostileHttp1Server[] = [];
const transports: Transport[] = [];
afterEach(async () => {
  for (const t of transports.splice(0)) await t.close();
  for (const s of servers.splice(0)) await s.close();
});

interface Expected {
  readonly code: ErrorCode;
  /** The message on each build (one pattern for both when the same). */
  readonly message: RegExp | Readonly<Record<Build, RegExp>>;
  /** Memory the call may take: the default limit plus slack for the floods, else the slack. */
  readonly floods?: boolean;
  readonly deadlineMs?: number;
}

const INVALID = /the response is not valid HTTP\/1\.1/;
const CASES: Readonly<Record<Http1ScenarioName, Expected>> = {
  'endless-headers': {
    code: 'protocol',
    message: {
      'Node sockets': /not valid HTTP\/1\.1: the response head exceeds 64 KiB/,
      fetch: /head is too large/,
    },
  },
  'endless-line': {
    code: 'resource_exhausted',
    message:
      /an event of the stream exceeds maxResponseBytes \(67108864 bytes\); raise httpTransport\(\{ maxResponseBytes \}\)/,
    floods: true,
  },
  'huge-chunk-size': {
    code: 'resource_exhausted',
    message: {
      // The Node engine sees the chunk's size line and refuses it at once; fetch hides the framing.
      'Node sockets': /a chunk announced as 1099511627775 bytes exceeds maxResponseBytes \(67108864 bytes\)/,
      fetch: /an event of the stream exceeds maxResponseBytes \(67108864 bytes\)/,
    },
    floods: true,
  },
  'garbage-chunk-size': { code: 'protocol', message: /not valid HTTP\/1\.1: .*chunk size/i },
  'short-content-length': { code: 'protocol', message: /ended in the middle of an event/ },
  'long-content-length': {
    code: 'unavailable',
    message: { 'Node sockets': /closed before the response ended/, fetch: /other side closed|terminated/ },
  },
  'close-mid-chunk': {
    code: 'unavailable',
    message: { 'Node sockets': /closed before the response ended/, fetch: /other side closed|terminated/ },
  },
  'million-tiny-events': { code: 'internal', message: /the error after a million tiny events/ },
  'te-and-content-length': {
    code: 'protocol',
    message: {
      'Node sockets': /not valid HTTP\/1\.1: both transfer-encoding and content-length/,
      // undici 7 (Node 24, 26) refuses the head; undici 6 (Node 22) reads the body by its length
      // and finds it does not match.
      fetch:
        /not valid HTTP\/1\.1: (?:Content-Length can't be present with Transfer-Encoding|Response body length does not match content-length header)/,
    },
  },
  'http10-no-length': { code: 'protocol', message: /ended in the middle of an event/ },
  'one-byte-per-second': {
    code: 'deadline_exceeded',
    message: /did not finish within its 1500 ms deadline/,
    deadlineMs: SHORT_DEADLINE_MS,
  },
  'unsolicited-second-response': { code: 'unavailable', message: /HTTP 503: hostile: overloaded/ },
  'not-http': { code: 'protocol', message: INVALID },
  'http2-server': { code: 'unavailable', message: /an HTTP\/2-only server, such as Triton's gRPC port/ },
};

interface Outcome {
  readonly responses: InferResponse[];
  readonly error: TritonLlmError | undefined;
  readonly ms: number;
  readonly heapBytes: number;
}

async function streamOnce(transport: Transport, timeoutMs: number, live = false): Promise<Outcome> {
  const responses: InferResponse[] = [];
  let error: TritonLlmError | undefined;
  liveBytes();
  const peak = sampleMemoryPeak(5, { live });
  const started = performance.now();
  try {
    for await (const r of transport.stream(HOSTILE_HTTP1_REQUEST, { timeoutMs })) responses.push(r);
  } catch (err) {
    if (!(err instanceof TritonLlmError)) throw err;
    error = err;
  }
  const ms = performance.now() - started;
  return { responses, error, ms, heapBytes: peak.stop().heapBytes };
}

function texts(responses: readonly InferResponse[]): string[] {
  return responses.flatMap((r) =>
    r.outputs.filter((t) => t.name === 'text_output').flatMap((t) => tensorStrings(t)),
  );
}

describe.each(Object.keys(BUILDS) as Build[])('a hostile HTTP/1.1 server, on the %s build', (build) => {
  it.each(Object.keys(CASES) as Http1ScenarioName[])(
    '%s: a typed error in time, memory bounded, and the next call works',
    { timeout: 30_000 },
    async (scenario) => {
      const expected = CASES[scenario];
      const server = await startHostileHttp1Server(scenario);
      servers.push(server);
      const transport = BUILDS[build]({ baseUrl: server.url });
      transports.push(transport);

      const deadlineMs = expected.deadlineMs ?? DEADLINE_MS;
      const outcome = await streamOnce(transport, deadlineMs, build === 'fetch');
      expect(outcome.error, `ended with ${outcome.responses.length} responses and no error`).toBeInstanceOf(
        TritonLlmError,
      );
      const message = expected.message instanceof RegExp ? expected.message : expected.message[build];
      expect({ code: outcome.error?.code, message: outcome.error?.message }).toEqual({
        code: expected.code,
        message: expect.stringMatching(message),
      });
      if (scenario !== 'http2-server') expect(outcome.error?.message).not.toMatch(/HTTP\/2-only/);
      // Over the client's own maxResponseBytes: another attempt would be over it again.
      if (expected.code === 'resource_exhausted') expect(outcome.error?.retryable).toBe(false);
      if (expected.deadlineMs === undefined) expect(outcome.ms).toBeLessThan(WITHIN_MS);
      else expect(outcome.ms).toBeLessThan(expected.deadlineMs + 1_000);
      const bound =
        expected.floods === true
          ? DEFAULT_MAX_RESPONSE_BYTES + SLACK + (build === 'fetch' ? UNDICI_READ_AHEAD : 0)
          : SLACK;
      expect(outcome.heapBytes).toBeLessThan(bound);

      // The same transport, once more: the server now answers properly, and no byte of the
      // scenario (such as an answer nobody asked for) is taken for this call's answer.
      const next = await streamOnce(transport, DEADLINE_MS);
      expect(next.error).toBeUndefined();
      expect(texts(next.responses)).toEqual(['ok']);
      expect(next.responses.at(-1)?.final).toBe(true);
    },
  );
});

it("bounds an event by default at the gRPC transport's message limit", () => {
  expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(DEFAULT_MAX_RECEIVE_BYTES);
});
