/**
 * An in-memory replica: a test double of the `Transport` interface whose health, failures and
 * timing a test sets directly, for the balancing and ejection logic of `replicaTransport`.
 */
import { TritonLlmError } from '../src/errors.js';
import type {
  CallOptions,
  InferRequest,
  InferResponse,
  InferSink,
  InferStream,
  Transport,
} from '../src/transport.js';

export function response(id: string, final: boolean, from = ''): InferResponse {
  return { model: 'm', modelVersion: '1', id, outputs: [], parameters: { from }, final };
}

export function request(id = 'r'): InferRequest {
  return { model: 'm', id, inputs: [] };
}

export const unavailable = (): TritonLlmError => new TritonLlmError('unavailable', 'connection refused');

/** A call held open until the test releases it. */
interface Held {
  readonly resolve: () => void;
}

export class MemoryReplica implements Transport {
  readonly protocol = 'grpc' as const;
  ready = true;
  modelIsReady = true;
  /** Every call fails with `unavailable`, as a stopped server does. */
  down = false;
  /** Errors the next inference calls (infer, or a stream before its first response) fail with. */
  readonly failNext: TritonLlmError[] = [];
  /** Responses each stream yields before its final one. */
  streamLength = 2;
  /** A stream fails with this after its first response. */
  failAfterFirst: TritonLlmError | undefined;
  /** Inference calls wait until `release()`. */
  hold = false;
  /** A stream's end (after its final response) waits until `release()`, as gRPC trailers follow it. */
  holdEnd = false;
  /** Responses a stream yields after its final one (a server that breaks the protocol), and how many went. */
  extraAfterFinal = 0;
  extraSent = 0;
  closed = false;
  readonly calls: string[] = [];
  readonly stops: string[] = [];
  readonly probes: string[] = [];
  lastOptions: CallOptions | undefined;
  private readonly held: Held[] = [];
  /** Set while frozen: what every call, stream response and health check waits for. */
  thawed: Promise<void> | undefined;
  private thawNow: (() => void) | undefined;

  constructor(readonly name: string) {}

  get waiting(): number {
    return this.held.length;
  }

  /** Lets every held call go on. */
  release(): void {
    for (const h of this.held.splice(0)) h.resolve();
  }

  /** Lets the call held longest go on. */
  releaseOne(): void {
    this.held.shift()?.resolve();
  }

  /**
   * From now on nothing answers, health checks included, and nothing fails either: a server
   * stopped by SIGSTOP, whose connections stay open.
   */
  freeze(): void {
    this.thawed ??= new Promise<void>((resolve) => {
      this.thawNow = resolve;
    });
  }

  thaw(): void {
    this.thawNow?.();
    this.thawed = undefined;
  }

  /** Waits while frozen. */
  async frozen(): Promise<void> {
    while (this.thawed !== undefined) await this.thawed;
  }

  private async gate(): Promise<void> {
    // Not awaited unless frozen: a held call is in `held` as soon as it is made.
    if (this.thawed !== undefined) await this.frozen();
    if (this.closed) throw new TritonLlmError('unavailable', 'closed', { retryable: false });
    if (this.down) throw unavailable();
    if (this.hold) await new Promise<void>((resolve) => this.held.push({ resolve }));
    const err = this.failNext.shift();
    if (err !== undefined) throw err;
  }

  async infer(r: InferRequest, options?: CallOptions): Promise<InferResponse> {
    this.calls.push(`infer ${r.id}`);
    this.lastOptions = options;
    await this.gate();
    return response(r.id, true, this.name);
  }

  stream(r: InferRequest, options?: CallOptions): InferStream {
    this.calls.push(`stream ${r.id}`);
    this.lastOptions = options;
    const replica = this;
    async function* responses(): AsyncGenerator<InferResponse> {
      await replica.gate();
      for (let i = 0; i < replica.streamLength; i++) {
        if (replica.thawed !== undefined) await replica.frozen();
        yield response(r.id, false, replica.name);
        if (i === 0 && replica.failAfterFirst !== undefined) throw replica.failAfterFirst;
      }
      yield response(r.id, true, replica.name);
      if (replica.holdEnd) await new Promise<void>((resolve) => replica.held.push({ resolve }));
      for (let i = 0; i < replica.extraAfterFinal; i++) {
        replica.extraSent += 1;
        yield response(r.id, false, replica.name);
      }
    }
    return new MemoryStream(responses(), r.id, this);
  }

  private async probe<T>(what: string, value: T): Promise<T> {
    this.probes.push(what);
    await this.frozen();
    if (this.down || this.closed) throw unavailable();
    return value;
  }

  serverLive = () => this.probe('live', true);
  serverReady = () => this.probe('ready', this.ready);
  modelReady = (model: string) => this.probe(`model ${model}`, this.modelIsReady);
  serverMetadata = () => this.probe('metadata', { name: this.name, version: '1', extensions: [] });
  modelMetadata = (model: string) =>
    this.probe('model metadata', { name: model, versions: ['1'], platform: 'p', inputs: [], outputs: [] });
  modelConfig = (model: string) =>
    this.probe('config', {
      name: model,
      platform: '',
      backend: 'python',
      maxBatchSize: 0,
      inputs: [],
      outputs: [],
      decoupled: true,
      parameters: {},
    });
  modelStatistics = () => this.probe('statistics', []);

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** A stream of a {@link MemoryReplica}: its responses, read by pull or iteration, and its cancel. */
class MemoryStream implements InferStream {
  readonly cancelsOnServer = true;
  private cancelled = false;

  constructor(
    private readonly responses: AsyncGenerator<InferResponse>,
    private readonly id: string,
    private readonly replica: MemoryReplica,
  ) {}

  pull(sink: InferSink): void {
    this.read().then(
      (r) => (r.done === true ? sink.onEnd() : sink.onResponse(r.value)),
      (e: unknown) => sink.onError(e),
    );
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.replica.calls.push(`cancel ${this.id}`);
  }

  async sendStop(stop: InferRequest): Promise<void> {
    this.replica.stops.push(stop.id);
  }

  [Symbol.asyncIterator](): AsyncIterator<InferResponse> {
    return {
      next: () => this.read(),
      return: async () => {
        this.cancel();
        return this.responses.return(undefined);
      },
    };
  }

  private async read(): Promise<IteratorResult<InferResponse>> {
    if (this.cancelled) throw new TritonLlmError('cancelled', 'the call was cancelled');
    return this.responses.next();
  }
}

/** Three replicas `a`, `b`, `c`. */
export function trio(): [MemoryReplica, MemoryReplica, MemoryReplica] {
  return [new MemoryReplica('a'), new MemoryReplica('b'), new MemoryReplica('c')];
}

/** The replica that answered: the doubles put their name in the response. */
export function servedBy(r: InferResponse): string {
  return String(r.parameters.from);
}

export async function drain(stream: InferStream): Promise<InferResponse[]> {
  const out: InferResponse[] = [];
  for await (const r of stream) out.push(r);
  return out;
}

export async function rejection(p: Promise<unknown>): Promise<TritonLlmError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  }
  throw new Error('expected a TritonLlmError, the call succeeded');
}
