/**
 * One call of `pnpm bench:hostile`, alone in its process (started with --expose-gc so the baseline
 * is live memory): our gRPC transport or @grpc/grpc-js against one hostile server, streamed or
 * unary. Prints one JSON line: how the call ended, after how long, and the most memory it took.
 * The first call warms the process up; the second is measured. A slow reader takes the first
 * response and then nothing until the parent says the server stopped sending. An uncaught
 * exception, which would have ended a real process, is the outcome.
 */
import {
  type ClientDuplexStream,
  type ClientUnaryCall,
  credentials,
  makeGenericClientConstructor,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { grpcTransport } from '@trtllm/grpc';
import { type Transport, TritonLlmError } from '@trtllm/sdk';
import { HOSTILE_REQUEST, hostileRequestBytes } from '../../test/reliability/support/hostile-h2.js';
import { sampleMemoryPeak } from '../../test/reliability/support/memory-peak.js';

export interface HostileJob {
  readonly client: 'ours' | 'grpc-js';
  /**
   * `stream`: one ModelStreamInfer call; `stream-twice`: one, then a second on the same client
   * (the outcome is the second's); `unary-twice`: ServerLive, then again on the same client.
   */
  readonly call: 'stream' | 'stream-twice' | 'unary-twice';
  readonly url: string;
  readonly ca: string | undefined;
  readonly slowReader: boolean;
  readonly deadlineMs: number;
  /** Our transport's HTTP/2 engine (the builtin one unless set). */
  readonly engine?: 'node-http2';
}

export interface HostileRun {
  /** `ok`, `code: message` of the error that ended the (last) call, or `crash: ...`. */
  readonly outcome: string;
  readonly ms: number;
  readonly heapBytes: number;
  readonly rssBytes: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as HostileJob;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

// The parent says each time a connection's server has stopped sending (for the slow reader).
let finished = 0;
let onFinished: (() => void) | undefined;
process.on('message', (m) => {
  if (m !== 'finished') return;
  finished += 1;
  onFinished?.();
});
/** Resolves once the server of the `round`-th call (from 0) has stopped sending. */
function serverDone(round: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (finished > round) resolve();
    };
    onFinished = check;
    check();
  });
}

// A first call against the same server warms up the process (lazy modules, JIT), then the second
// is measured: the first call of a cold process is mostly start-up, the same for both clients.
let round = 0;
let started = 0;
let peak: ReturnType<typeof sampleMemoryPeak> | undefined;
let reported = false;
function report(outcome: string): void {
  if (reported) return;
  reported = true;
  const { heapBytes, rssBytes } = peak?.stop() ?? { heapBytes: Number.NaN, rssBytes: Number.NaN };
  const clean = outcome
    .replaceAll(job.url, 'URL')
    .replaceAll(new URL(job.url).host, 'HOST')
    .replace(/ ?\(\d{4}-\d\d-\d\dT[\d:.]+Z\)/g, '');
  console.log(
    JSON.stringify({
      outcome: clean,
      ms: performance.now() - started,
      heapBytes,
      rssBytes,
    } satisfies HostileRun),
  );
  process.exit(0);
}
process.on('uncaughtException', (err) => report(`crash: uncaught ${describe(err)}`));
process.on('unhandledRejection', (err) => report(`crash: unhandled rejection ${describe(err)}`));

function describe(err: unknown): string {
  if (err instanceof TritonLlmError)
    return `${err.code}${err.retryable ? ' (retryable)' : ''}: ${err.message}`;
  if (isServiceError(err)) return `${status[err.code]}: ${err.details}`;
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === 'number' && 'details' in err;
}

async function ours(): Promise<string> {
  const transport: Transport = grpcTransport({
    baseUrl: job.url,
    ...(job.engine !== undefined ? { engine: job.engine } : {}),
    ...(job.ca !== undefined ? { tls: { ca: job.ca } } : {}),
  });
  try {
    if (job.call === 'unary-twice') {
      let last = '';
      for (let i = 0; i < 2; i++) {
        last = await transport.serverLive({ timeoutMs: job.deadlineMs }).then(
          (live) => `ok (live ${live})`,
          (err: unknown) => describe(err),
        );
      }
      return last;
    }
    let last = '';
    for (let i = 0; i < (job.call === 'stream-twice' ? 2 : 1); i++) last = await oursStream(transport);
    return last;
  } finally {
    await transport.close();
  }
}

async function oursStream(transport: Transport): Promise<string> {
  let n = 0;
  try {
    for await (const _ of transport.stream(HOSTILE_REQUEST, { timeoutMs: job.deadlineMs })) {
      n += 1;
      if (job.slowReader && n === 1) await Promise.race([serverDone(round), delay(job.deadlineMs)]);
    }
    return `ok (${n} responses)`;
  } catch (err) {
    return describe(err);
  }
}

const identity = (b: Buffer) => b;
const Client = makeGenericClientConstructor(
  {
    ModelStreamInfer: {
      path: '/inference.GRPCInferenceService/ModelStreamInfer',
      requestStream: true,
      responseStream: true,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
    ServerLive: {
      path: '/inference.GRPCInferenceService/ServerLive',
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  },
  'GRPCInferenceService',
);
interface GenericClient {
  ModelStreamInfer(options: { deadline: number }): ClientDuplexStream<Buffer, Buffer>;
  ServerLive(
    request: Buffer,
    options: { deadline: number },
    callback: (err: ServiceError | null, value?: Buffer) => void,
  ): ClientUnaryCall;
  close(): void;
}

async function grpcJs(): Promise<string> {
  const url = new URL(job.url);
  const creds =
    job.ca !== undefined ? credentials.createSsl(Buffer.from(job.ca)) : credentials.createInsecure();
  // The same receive limit as ours (64 MiB; grpc-js' own default is 4 MiB), so a bomb meets the
  // same bound in both.
  const client = new Client(url.host, creds, {
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
  }) as unknown as GenericClient;
  try {
    if (job.call === 'unary-twice') {
      let last = '';
      for (let i = 0; i < 2; i++) {
        last = await new Promise<string>((resolve) => {
          client.ServerLive(Buffer.alloc(0), { deadline: Date.now() + job.deadlineMs }, (err) =>
            resolve(err === null ? 'ok' : describe(err)),
          );
        });
      }
      return last;
    }
    let last = '';
    for (let i = 0; i < (job.call === 'stream-twice' ? 2 : 1); i++) last = await grpcJsStream(client);
    return last;
  } finally {
    client.close();
  }
}

function grpcJsStream(client: GenericClient): Promise<string> {
  const call = client.ModelStreamInfer({ deadline: Date.now() + job.deadlineMs });
  let n = 0;
  const ended = new Promise<string>((resolve) => {
    call.on('status', (s: { code: number; details: string }) =>
      resolve(s.code === status.OK ? `ok (${n} responses)` : `${status[s.code]}: ${s.details}`),
    );
  });
  call.on('error', () => undefined);
  call.on('data', () => {
    n += 1;
    if (job.slowReader && n === 1) {
      call.pause();
      void Promise.race([serverDone(round), delay(job.deadlineMs)]).then(() => call.resume());
    }
  });
  call.write(Buffer.from(hostileRequestBytes()));
  call.end();
  return ended;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

// A call still running this long after its deadline is reported as a hang (with a timer that
// keeps the process up: a client that holds nothing open would otherwise just exit).
const HANG_MS = 5_000;
const run = job.client === 'ours' ? ours : grpcJs;
function watched(): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<string>((resolve) => {
    timer = setTimeout(
      () => resolve(`hang: no end ${HANG_MS / 1000} s past the ${job.deadlineMs / 1000} s deadline`),
      job.deadlineMs + HANG_MS,
    );
  });
  return Promise.race([run(), hang]).finally(() => clearTimeout(timer));
}
started = performance.now();
const warmUp = await watched();
if (warmUp.startsWith('hang')) report(warmUp);
round = 1;
gc();
peak = sampleMemoryPeak();
started = performance.now();
report(await watched());
