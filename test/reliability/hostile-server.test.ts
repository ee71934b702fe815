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

async function hostile(scenario: ScenarioName): Promise<{ server: HostileServer; transport: Transport }> {
  const server = await startHostileServer(scenario, { capBytes: CAP_BYTES });
  servers.push(server);
  const transport = grpcTransport({
    baseUrl: server.url,
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
async function streamAgainst(scenario: ScenarioName, slowReader = false): Promise<Outcome> {
  const { server, transport } = await hostile(scenario);
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
  it.each(cases)('%s', async (scenario, message, h2Code) => {
    const outcome = await streamAgainst(scenario);
    expectTyped(outcome, 'protocol', message);
    expect(outcome.error.retryable).toBe(false);
    expect(await goawayCode(outcome.peer)).toBe(h2Code);
  });

  it('window-overrun (DATA past the stream window while the reader is slow): FLOW_CONTROL_ERROR', async () => {
    const outcome = await streamAgainst('window-overrun', true);
    expectTyped(outcome, 'protocol', /FLOW_CONTROL_ERROR/);
    expect(outcome.error.retryable).toBe(false);
    expect(await goawayCode(outcome.peer)).toBe(FLOW_CONTROL_ERROR);
    // The client read a little, then stopped the server long before the cap.
    expect(outcome.responses.length).toBeGreaterThan(0);
    expect(outcome.peer.bytesSent).toBeLessThan(CAP_BYTES);
  });

  it('random bytes instead of frames: a protocol error, and the client leaves', async () => {
    const outcome = await streamAgainst('garbage');
    expectTyped(outcome, 'protocol', /./);
    expect(outcome.error.retryable).toBe(false);
    await outcome.peer.whenClosed;
    expect(outcome.peer.closed).toBe(true);
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
  const cases: [ScenarioName, ErrorCode, RegExp, boolean][] = [
    ['http1', 'unavailable', /answered HTTP\/1\.1.*not a gRPC endpoint/s, false],
    ['tls-no-h2', 'unavailable', /HTTP\/2|not a gRPC endpoint/, false],
    ['garbage', 'protocol', /./, false],
    ['close-at-once', 'unavailable', /./, true],
  ];
  it.each(cases)('%s', { timeout: 4 * TIMEOUT_MS + 5_000 }, async (scenario, code, message, retryable) => {
    const { transport } = await hostile(scenario);
    const errors: TritonLlmError[] = [];
    for (let round = 0; round < 2; round++) {
      errors.push(await rejection(readAll(transport.stream(HOSTILE_REQUEST, { timeoutMs: TIMEOUT_MS }))));
      errors.push(await rejection(transport.serverLive({ timeoutMs: TIMEOUT_MS })));
    }
    for (const err of errors) {
      expect({ code: err.code, retryable: err.retryable }).toEqual({ code, retryable });
      expect(err.message).toMatch(message);
    }
  });
});

async function readAll(stream: AsyncIterable<InferResponse>): Promise<InferResponse[]> {
  const out: InferResponse[] = [];
  for await (const r of stream) out.push(r);
  return out;
}
