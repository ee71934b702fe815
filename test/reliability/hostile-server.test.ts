import { grpcTransport } from '@trtllm/grpc';
import { type ErrorCode, type InferResponse, type Transport, TritonLlmError } from '@trtllm/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rejection } from '../../packages/grpc/test/support.js';
import { liveBytes, MiB } from './support/heap.js';
import {
  GOAWAY,
  HOSTILE_REQUEST,
  type HostilePeer,
  type HostileServer,
  RST_STREAM,
  type ScenarioName,
  startHostileServer,
} from './support/hostile-h2.js';
import { sampleMemoryPeak } from './support/memory-peak.js';

// Issue 27: nothing a server sends may cost more than a typed error. Every call has a deadline far
// beyond what a violation should take to notice, so "the client waited for its deadline" shows as
// the code `deadline_exceeded` and fails the test; a crash or an unhandled rejection fails it too.
const TIMEOUT_MS = 10_000;
const MAX_GROWTH = 32 * MiB;
// The floods stop here even against a client that never objects.
const CAP_BYTES = 64 * MiB;

// HTTP/2 error codes (RFC 9113, 7) the client's GOAWAY must carry.
const PROTOCOL_ERROR = 0x1;
const FLOW_CONTROL_ERROR = 0x3;
const FRAME_SIZE_ERROR = 0x6;
const COMPRESSION_ERROR = 0x9;

const servers: HostileServer[] = [];
const transports: Transport[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const t of transports.splice(0)) await t.close();
  for (const s of servers.splice(0)) await s.close();
});

/**
 * A hostile server and a transport to it, on the engine the run chose (TRTLLM_GRPC_ENGINE) unless
 * `engine` pins one: cases that name the violated rule or the bytes the server sent need the
 * builtin engine, whose own frame reader sees them; node:http2 (nghttp2) reports a broken frame in
 * a few words ("Protocol error"), and its table is published beside the builtin one in
 * docs/RELIABILITY.md (`HOSTILE_ENGINE=node-http2 pnpm bench:hostile`).
 */
async function hostile(
  scenario: ScenarioName,
  engine?: 'builtin' | 'node-http2',
): Promise<{ server: HostileServer; transport: Transport }> {
  const server = await startHostileServer(scenario, { capBytes: CAP_BYTES });
  servers.push(server);
  const transport = grpcTransport({
    baseUrl: server.url,
    ...(engine !== undefined ? { engine } : {}),
    ...(server.ca !== undefined ? { tls: { ca: server.ca } } : {}),
  });
  transports.push(transport);
  return { server, transport };
}

interface Outcome {
  readonly responses: InferResponse[];
  readonly error: TritonLlmError | undefined;
  /** Peak growth of heap + ArrayBuffers during the call. */
  readonly heapBytes: number;
  readonly peer: HostilePeer;
}

/**
 * One streamed call of `HOSTILE_REQUEST` against `scenario`. A slow reader takes the first
 * response, then reads nothing more until the server has stopped sending.
 */
async function streamAgainst(
  scenario: ScenarioName,
  slowReader = false,
  engine?: 'builtin' | 'node-http2',
): Promise<Outcome> {
  const { server, transport } = await hostile(scenario, engine);
  liveBytes();
  const peak = sampleMemoryPeak();
  const responses: InferResponse[] = [];
  let error: TritonLlmError | undefined;
  try {
    for await (const r of transport.stream(HOSTILE_REQUEST, { timeoutMs: TIMEOUT_MS })) {
      responses.push(r);
      if (slowReader && responses.length === 1) await (await server.peer()).finished;
    }
  } catch (err) {
    if (!(err instanceof TritonLlmError)) throw err;
    error = err;
  }
  const { heapBytes } = peak.stop();
  return { responses, error, heapBytes, peer: await server.peer() };
}

function expectTyped(
  outcome: Outcome,
  code: ErrorCode,
  message: RegExp,
): asserts outcome is Outcome & { error: TritonLlmError } {
  expect(outcome.error, 'the call ended without an error').toBeInstanceOf(TritonLlmError);
  expect(outcome.error?.code).toBe(code);
  expect(outcome.error?.message).toMatch(message);
  expect(outcome.heapBytes).toBeLessThan(MAX_GROWTH);
}

/** The HTTP/2 error code of the client's GOAWAY (waits for it, or for the client to leave). */
async function goawayCode(peer: HostilePeer): Promise<number | undefined> {
  const goaway = await peer.frame((f) => f.type === GOAWAY);
  return goaway?.payload.readUInt32BE(4);
}

describe('frames that break HTTP/2: a protocol error naming the violation, GOAWAY with its code', () => {
  const cases: [ScenarioName, RegExp, number][] = [
    ['window-update-zero', /WINDOW_UPDATE/, PROTOCOL_ERROR],
    ['window-overflow', /window/i, FLOW_CONTROL_ERROR],
    ['settings-wrong-size', /SETTINGS/, FRAME_SIZE_ERROR],
    ['ping-wrong-size', /PING/, FRAME_SIZE_ERROR],
    ['stream-0-data', /DATA/, PROTOCOL_ERROR],
    ['first-frame-not-settings', /SETTINGS/, PROTOCOL_ERROR],
    ['hpack-table-update', /table size/i, COMPRESSION_ERROR],
    ['hpack-table-update-mid-block', /table size/i, COMPRESSION_ERROR],
    ['oversized-frame', /FRAME_SIZE_ERROR/, FRAME_SIZE_ERROR],
    ['padding-overflow', /padding/i, PROTOCOL_ERROR],
  ];
  // Pinned to the builtin engine: the message names the frame (see `hostile`); node:http2's
  // answers to the same frames are checked below.
  it.each(cases)('%s', async (scenario, message, h2Code) => {
    const outcome = await streamAgainst(scenario, false, 'builtin');
    expectTyped(outcome, 'protocol', message);
    expect(outcome.error.retryable).toBe(false);
    expect(await goawayCode(outcome.peer)).toBe(h2Code);
  });

  it('window-overrun (DATA past the stream window while the reader is slow): FLOW_CONTROL_ERROR', async () => {
    // Pinned to the builtin engine: the message names the GOAWAY code (see `hostile`).
    const outcome = await streamAgainst('window-overrun', true, 'builtin');
    expectTyped(outcome, 'protocol', /FLOW_CONTROL_ERROR/);
    expect(outcome.error.retryable).toBe(false);
    expect(await goawayCode(outcome.peer)).toBe(FLOW_CONTROL_ERROR);
    // The client read a little, then stopped the server long before the cap.
    expect(outcome.responses.length).toBeGreaterThan(0);
    expect(outcome.peer.bytesSent).toBeLessThan(CAP_BYTES);
  });

  it('random bytes instead of frames: a protocol error, and the client leaves', async () => {
    // Pinned to the builtin engine: nghttp2 cannot tell random bytes before the server's SETTINGS
    // from another protocol, and node:http2 answers them as a wrong port (unavailable).
    const outcome = await streamAgainst('garbage', false, 'builtin');
    expectTyped(outcome, 'protocol', /./);
    expect(outcome.error.retryable).toBe(false);
    await outcome.peer.whenClosed;
    expect(outcome.peer.closed).toBe(true);
  });
});

describe("the same frames on the node:http2 engine: a protocol error in nghttp2's words, naming its GOAWAY", () => {
  // nghttp2 names no frame, and reports most violations as "Protocol error" whatever code its
  // GOAWAY carried: these assert the error's code, that a GOAWAY went out, and that a GOAWAY the
  // message names is the one the server received. first-frame-not-settings is a peer that does not
  // speak HTTP/2 to nghttp2 (the wrong-port cases below).
  const names: Record<number, string> = {
    [PROTOCOL_ERROR]: 'PROTOCOL_ERROR',
    [FLOW_CONTROL_ERROR]: 'FLOW_CONTROL_ERROR',
    [FRAME_SIZE_ERROR]: 'FRAME_SIZE_ERROR',
    [COMPRESSION_ERROR]: 'COMPRESSION_ERROR',
  };
  const cases: [ScenarioName, boolean][] = [
    ['window-update-zero', false],
    ['window-overflow', false],
    ['settings-wrong-size', false],
    ['ping-wrong-size', false],
    ['stream-0-data', false],
    ['hpack-table-update', false],
    ['hpack-table-update-mid-block', false],
    ['oversized-frame', false],
    ['padding-overflow', false],
    ['window-overrun', true],
  ];
  it.each(cases)('%s', async (scenario, slowReader) => {
    const outcome = await streamAgainst(scenario, slowReader, 'node-http2');
    expectTyped(outcome, 'protocol', /broke the HTTP\/2 protocol: .*\(node:http2\)/);
    expect(outcome.error.retryable).toBe(false);
    const code = await goawayCode(outcome.peer);
    expect(names[code ?? -1], `GOAWAY ${code}`).toBeDefined();
    const named = /GOAWAY (\w+)/.exec(outcome.error.message)?.[1];
    expect(named ?? names[code ?? -1]).toBe(names[code ?? -1]);
  });
});

describe('answers too large to hold: resource_exhausted before the memory is spent', () => {
  it('continuation-flood: a header block past our SETTINGS_MAX_HEADER_LIST_SIZE', async () => {
    const outcome = await streamAgainst('continuation-flood');
    expectTyped(outcome, 'resource_exhausted', /header/i);
    // The connection's HPACK state is lost with the block: the client must drop the connection.
    await outcome.peer.whenClosed;
    expect(outcome.peer.bytesSent).toBeLessThan(CAP_BYTES);
  });

  it('huge-message: a gRPC message announcing 1.9 GB fails on its 5-byte prefix', async () => {
    const outcome = await streamAgainst('huge-message');
    expectTyped(outcome, 'resource_exhausted', /message/i);
    // Over the client's own maxReceiveMessageBytes, as every attempt would be: not retried.
    expect(outcome.error.retryable).toBe(false);
    // The stream is given up on the wire too (RST_STREAM, or the connection closed).
    const stopped = await outcome.peer.frame((f) => f.type === RST_STREAM || f.type === GOAWAY);
    expect(stopped !== undefined || outcome.peer.closed).toBe(true);
  });
});

describe('answers that are not gRPC', () => {
  it('html-502 (a proxy error page over HTTP/2): unavailable, quoting the start of the page', async () => {
    const outcome = await streamAgainst('html-502');
    expectTyped(outcome, 'unavailable', /502 Bad Gateway/);
    expect(outcome.responses).toEqual([]);
  });

  it('too-many-pings: every stream of the connection fails unavailable, and a warning is logged once', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const { transport } = await hostile('too-many-pings');
    const outcomes = await Promise.all(
      [1, 2].map(async () => {
        try {
          for await (const _ of transport.stream(HOSTILE_REQUEST, { timeoutMs: TIMEOUT_MS })) {
            // Nothing comes before the GOAWAY.
          }
          return undefined;
        } catch (err) {
          if (!(err instanceof TritonLlmError)) throw err;
          return err;
        }
      }),
    );
    expect(outcomes.map((e) => e?.code)).toEqual(['unavailable', 'unavailable']);
    const warnings = warn.mock.calls.filter((args) => args.join(' ').includes('too_many_pings'));
    expect(warnings).toHaveLength(1);
  });
});

describe('the unary path against the same servers: a typed error, not the deadline', () => {
  const scenarios: ScenarioName[] = [
    'window-update-zero',
    'window-overflow',
    'settings-wrong-size',
    'ping-wrong-size',
    'stream-0-data',
    'first-frame-not-settings',
    'hpack-table-update',
    'hpack-table-update-mid-block',
    'oversized-frame',
    'padding-overflow',
    'continuation-flood',
    'huge-message',
    'html-502',
  ];
  it.each(scenarios)('%s', async (scenario) => {
    const { transport } = await hostile(scenario);
    liveBytes();
    const peak = sampleMemoryPeak();
    const err = await rejection(transport.serverLive({ timeoutMs: TIMEOUT_MS }));
    expect(err.code).not.toBe('deadline_exceeded');
    expect(peak.stop().heapBytes).toBeLessThan(MAX_GROWTH);
  });
});

describe('the wrong port, twice in one process, on the streamed and the unary path', () => {
  // http1 and garbage are pinned per engine: the builtin engine reads the bytes that came (an
  // HTTP/1.1 status line, or no frames at all); nghttp2 sees a broken first frame either way, so
  // node:http2 names both a peer that does not speak HTTP/2. The others run on the chosen engine.
  const notH2 = /did not answer in HTTP\/2.*not a gRPC endpoint/s;
  const cases: [string, ScenarioName, ErrorCode, RegExp, boolean, 'builtin' | 'node-http2' | undefined][] = [
    [
      'http1 (builtin engine)',
      'http1',
      'unavailable',
      /answered HTTP\/1\.1.*not a gRPC endpoint/s,
      false,
      'builtin',
    ],
    ['http1 (node:http2 engine)', 'http1', 'unavailable', notH2, false, 'node-http2'],
    ['tls-no-h2', 'tls-no-h2', 'unavailable', /HTTP\/2|not a gRPC endpoint/, false, undefined],
    ['garbage (builtin engine)', 'garbage', 'protocol', /./, false, 'builtin'],
    ['garbage (node:http2 engine)', 'garbage', 'unavailable', notH2, false, 'node-http2'],
    ['close-at-once', 'close-at-once', 'unavailable', /./, true, undefined],
  ];
  it.each(cases)(
    '%s',
    { timeout: 4 * TIMEOUT_MS + 5_000 },
    async (_, scenario, code, message, retryable, engine) => {
      const { transport } = await hostile(scenario, engine);
      const errors: TritonLlmError[] = [];
      for (let round = 0; round < 2; round++) {
        errors.push(await rejection(readAll(transport.stream(HOSTILE_REQUEST, { timeoutMs: TIMEOUT_MS }))));
        errors.push(await rejection(transport.serverLive({ timeoutMs: TIMEOUT_MS })));
      }
      for (const err of errors) {
        expect({ code: err.code, retryable: err.retryable }).toEqual({ code, retryable });
        expect(err.message).toMatch(message);
      }
    },
  );
});

async function readAll(stream: AsyncIterable<InferResponse>): Promise<InferResponse[]> {
  const out: InferResponse[] = [];
  for await (const r of stream) out.push(r);
  return out;
}
