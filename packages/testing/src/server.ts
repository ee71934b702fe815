/** startFakeTriton(): the engine with its gRPC and HTTP front ends. */
import { asyncDispose } from './async-dispose.js';
import { Activity, DEFAULT_TOKENS_PER_TURN, type EngineContext, StopRegistry } from './engine/context.js';
import { DEFAULT_MAX_EVENTS, EventLog } from './engine/event-log.js';
import { FaultState } from './engine/faults.js';
import { ModelControl } from './engine/model-control.js';
import { BatchClock } from './engine/pace.js';
import { Statistics } from './engine/statistics.js';
import { startGrpcFrontEnd } from './grpc/server.js';
import { startHttpFrontEnd } from './http/server.js';
import { buildRepository } from './models/repository.js';
import type { FakeTriton, FakeTritonOptions } from './types.js';

// Everything is aborted at once; this only bounds close() should some request fail to notice.
const CLOSE_GRACE_MS = 2000;

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function nonNegative(name: string, value: number | undefined): number {
  if (value === undefined) return 0;
  if (!Number.isFinite(value) || value < 0) {
    throw new TypeError(`startFakeTriton: ${name} must be a non-negative number, got ${value}`);
  }
  return value;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new TypeError(`startFakeTriton: ${name} must be a number > 0, got ${value}`);
  }
  return value;
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`startFakeTriton: ${name} must be a whole number >= 1, got ${value}`);
  }
  return value;
}

function maxEventsOf(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_EVENTS;
  if (value !== Number.POSITIVE_INFINITY && !(Number.isSafeInteger(value) && value >= 0)) {
    throw new TypeError(
      `startFakeTriton: maxEvents must be a non-negative integer or Infinity, got ${value}`,
    );
  }
  return value;
}

/** The models explicit model control loads at start; undefined: Triton's default mode. */
function loadAtStart(options: FakeTritonOptions): readonly string[] | undefined {
  const { modelControl, loadModels } = options;
  if (modelControl === undefined) {
    if (loadModels !== undefined) {
      throw new TypeError("startFakeTriton: loadModels needs modelControl: 'explicit', as --load-model does");
    }
    return undefined;
  }
  if (modelControl !== 'explicit') {
    throw new TypeError(
      `startFakeTriton: modelControl must be 'explicit' or left out, got ${String(modelControl)}`,
    );
  }
  return loadModels ?? [];
}

/**
 * Starts a fake Triton Inference Server serving the TensorRT-LLM model repository of GENERATOR.md
 * over real gRPC and HTTP on loopback, with no GPU. Outputs are deterministic, so tests can
 * predict them with {@link generateTokens} and {@link fakeTokenizer}; the event log shows what each
 * model request did (including generations that outlive a cancelled ensemble call).
 * `await using fake = await startFakeTriton()` closes it when the scope ends.
 */
export async function startFakeTriton(
  options: FakeTritonOptions = {},
): Promise<FakeTriton & AsyncDisposable> {
  const host = options.host ?? '127.0.0.1';
  const ttftMs = nonNegative('ttftMs', options.ttftMs);
  const itlMs = nonNegative('itlMs', options.itlMs);
  const batchStepMs =
    options.batchStepMs === undefined ? undefined : positive('batchStepMs', options.batchStepMs);
  const tokensPerTurn = positiveInteger('tokensPerTurn', options.tokensPerTurn, DEFAULT_TOKENS_PER_TURN);
  const events = new EventLog(maxEventsOf(options.maxEvents));
  const faults = new FaultState();
  const activity = new Activity();
  const repository = buildRepository({
    backendVersion: options.backendVersion ?? 'latest',
    decoupled: options.decoupled ?? {},
    accumulateTokens: options.accumulateTokens ?? true,
    ttftMs,
    itlMs,
  });
  const control = new ModelControl(repository, loadAtStart(options));
  const ctx: EngineContext = {
    models: control.loaded,
    control,
    events,
    faults,
    stops: new StopRegistry(),
    activity,
    statistics: new Statistics(),
    ttftMs,
    itlMs,
    tokensPerTurn,
    batchClock: batchStepMs === undefined ? undefined : new BatchClock(batchStepMs),
  };
  const grpc = await startGrpcFrontEnd(ctx, {
    host,
    port: options.grpcPort ?? 0,
    tls: options.tls,
    maxConcurrentStreams: options.grpcMaxConcurrentStreams,
  });
  let http: Awaited<ReturnType<typeof startHttpFrontEnd>>;
  try {
    http = await startHttpFrontEnd(ctx, {
      host,
      port: options.httpPort ?? 0,
      tls: options.tls,
      cors: options.cors ?? false,
    });
  } catch (err) {
    await grpc.close();
    throw err;
  }
  const scheme = options.tls ? 'https' : 'http';
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const ended = activity.close(CLOSE_GRACE_MS);
      await Promise.all([grpc.close(), http.close()]);
      await ended;
    })();
    return closing;
  };
  return {
    grpcUrl: `${scheme}://${urlHost(host)}:${grpc.port}`,
    httpUrl: `${scheme}://${urlHost(host)}:${http.port}`,
    grpcPort: grpc.port,
    httpPort: http.port,
    events: () => events.all(),
    waitForEvent: (match, timeoutMs = 5000) => events.wait(match, timeoutMs),
    clearEvents: () => events.clear(),
    setFaults: (f) => faults.set(f),
    activeRequests: () => activity.active,
    close,
    [asyncDispose]: close,
  };
}
