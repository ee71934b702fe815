/**
 * A `Transport` that replays server answers a test writes down, for unit tests of the client's
 * generation state machine. It implements the public interface that users implement for their own
 * transports; it stands in for the wire, never for any of our functions. It records what the wire
 * would see: streams opened, unary calls, in-band stops and cancels.
 */
import {
  createTensor,
  type DataType,
  type InferRequest,
  type InferResponse,
  type ModelConfig,
  type Tensor,
  type Tokenizer,
  type Transport,
  TritonLlmError,
} from '../src/index.js';
import type { InferSink, InferStream } from '../src/transport-kit.js';

/** One thing the server does next on a stream. */
export type Step =
  | { readonly respond: (id: string) => InferResponse }
  | { readonly fail: unknown }
  /** Says nothing until the call is cancelled (then the read fails `cancelled`) or stopped in-band. */
  | 'silence';

/** What one call (a stream, or a unary `infer`) answers. */
export interface Script {
  readonly steps: readonly Step[];
  /** What the stream does once the in-band stop for its request arrives (default: keeps its steps). */
  readonly onStop?: readonly Step[];
  /** `sendStop` fails with this instead of reaching the stream. */
  readonly stopFails?: unknown;
}

export interface ScriptedOptions {
  readonly protocol?: 'grpc' | 'http';
  /** Streams declare `cancelsOnServer: false`, as requests sharing one gRPC call do. */
  readonly sharedCall?: boolean;
}

/** A transport for one model whose calls answer the scripts given, in order. */
export class ScriptedTransport implements Transport {
  readonly protocol: 'grpc' | 'http';
  /** What reached the wire, in order: `stream <id>`, `infer <id>`, `stop <id>`, `cancel <id>`. */
  readonly log: string[] = [];
  readonly requests: InferRequest[] = [];
  private readonly scripts: Script[];

  constructor(
    private readonly config: ModelConfig,
    scripts: readonly Script[],
    private readonly options: ScriptedOptions = {},
  ) {
    this.protocol = options.protocol ?? 'grpc';
    this.scripts = [...scripts];
  }

  /** Scripts the next call after those given to the constructor. */
  add(script: Script): void {
    this.scripts.push(script);
  }

  /** How many inference calls (streams and unary) were made. */
  get calls(): number {
    return this.requests.length;
  }

  private next(): Script {
    const script = this.scripts.shift();
    if (script === undefined) throw new Error('the test scripted fewer calls than the client made');
    return script;
  }

  async infer(request: InferRequest, options?: { signal?: AbortSignal }): Promise<InferResponse> {
    this.log.push(`infer ${request.id}`);
    this.requests.push(request);
    const reply = new ScriptedStream(this.next(), request.id, this.log, options?.signal);
    const first = await reply.read();
    if (first.done) throw new Error('a unary script needs one response');
    return first.value;
  }

  stream(request: InferRequest, options?: { signal?: AbortSignal }): InferStream {
    this.log.push(`stream ${request.id}`);
    this.requests.push(request);
    const cancelsOnServer = this.options.sharedCall !== true;
    return new ScriptedStream(this.next(), request.id, this.log, options?.signal, cancelsOnServer);
  }

  async serverLive(): Promise<boolean> {
    return true;
  }
  async serverReady(): Promise<boolean> {
    return true;
  }
  async modelReady(): Promise<boolean> {
    return true;
  }
  async serverMetadata() {
    return { name: 'scripted', version: '0', extensions: [] };
  }
  async modelMetadata(model: string) {
    return { name: model, versions: ['1'], platform: this.config.platform, inputs: [], outputs: [] };
  }
  async modelConfig(): Promise<ModelConfig> {
    return this.config;
  }
  async modelStatistics() {
    return [];
  }
  async close(): Promise<void> {}
}

class ScriptedStream implements InferStream {
  private steps: Step[];
  private cancelled = false;
  private ended = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly script: Script,
    private readonly id: string,
    private readonly log: string[],
    signal: AbortSignal | undefined,
    readonly cancelsOnServer = true,
  ) {
    this.steps = [...script.steps];
    if (signal?.aborted === true) this.cancel();
    else signal?.addEventListener('abort', () => this.cancel(), { once: true });
  }

  /** How the client reads a stream ({@link InferStream.pull}). */
  pull(sink: InferSink): void {
    this.read().then(
      (r) => (r.done ? sink.onEnd() : sink.onResponse(r.value)),
      (e: unknown) => sink.onError(e),
    );
  }

  [Symbol.asyncIterator](): AsyncIterator<InferResponse> {
    return { next: () => this.read() };
  }

  /** The call is told to end: what a gRPC cancel or an HTTP disconnect is on the wire. */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.log.push(`cancel ${this.id}`);
    this.wake?.();
  }

  async sendStop(stop: InferRequest): Promise<void> {
    this.log.push(`stop ${stop.id}`);
    if (this.script.stopFails !== undefined) throw this.script.stopFails;
    if (this.script.onStop !== undefined) this.steps = [...this.script.onStop];
    this.wake?.();
  }

  async read(): Promise<IteratorResult<InferResponse>> {
    for (;;) {
      if (this.cancelled) throw new TritonLlmError('cancelled', 'the call was cancelled');
      if (this.ended) return { done: true, value: undefined };
      const step = this.steps.shift();
      if (step === undefined) {
        this.ended = true;
        return { done: true, value: undefined };
      }
      if (step === 'silence') {
        this.steps.unshift(step);
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      if ('fail' in step) {
        this.ended = true;
        throw step.fail;
      }
      const response = step.respond(this.id);
      if (response.final) this.ended = true;
      return { done: false, value: response };
    }
  }
}

// ---- answers ----

function response(id: string, outputs: Tensor[], final: boolean): InferResponse {
  return { model: 'm', modelVersion: '1', id, outputs, parameters: {}, final };
}

export interface TextOptions {
  readonly final?: boolean;
  readonly sequenceIndex?: number;
  readonly numOutputTokens?: number;
  readonly finishReason?: string;
}

/** A text model's response (`text_output` `[batch, sequences]`, as gRPC carries it). */
export function text(value: string | readonly string[], options: TextOptions = {}): Step {
  const texts = typeof value === 'string' ? [value] : value;
  return {
    respond: (id) => {
      const outputs = [createTensor('text_output', 'BYTES', [1, texts.length], texts)];
      if (options.sequenceIndex !== undefined)
        outputs.push(createTensor('sequence_index', 'INT32', [1, 1], [options.sequenceIndex]));
      if (options.numOutputTokens !== undefined)
        outputs.push(createTensor('num_output_tokens', 'INT32', [1, 1], [options.numOutputTokens]));
      if (options.finishReason !== undefined)
        outputs.push(createTensor('finish_reason', 'BYTES', [1, 1], [options.finishReason]));
      return response(id, outputs, options.final === true);
    },
  };
}

/** The raw model's response: one row of ids per beam, each with its `sequence_length`. */
export function ids(
  beams: readonly (readonly number[])[],
  options: { readonly final?: boolean; readonly lengths?: readonly number[] } = {},
): Step {
  const width = Math.max(...beams.map((b) => b.length));
  const padded = beams.flatMap((b) => [...b, ...new Array<number>(width - b.length).fill(0)]);
  const lengths = options.lengths ?? beams.map((b) => b.length);
  return {
    respond: (id) =>
      response(
        id,
        [
          createTensor('output_ids', 'INT32', [1, beams.length, width], padded),
          createTensor('sequence_length', 'INT32', [1, beams.length], lengths),
        ],
        options.final === true,
      ),
  };
}

/** A response that carries only the final flag (`triton_enable_empty_final_response`). */
export const emptyFinal: Step = { respond: (id) => response(id, [], true) };

/** The flags-only final of a BLS model: one empty `text_output`. */
export const blsFlagsOnlyFinal: Step = text('', { final: true });

export function fail(error: unknown): Step {
  return { fail: error };
}

// ---- deployed models ----

type Spec = readonly [name: string, datatype: DataType, dims: readonly number[]];

function config(
  name: string,
  platform: string,
  backend: string,
  decoupled: boolean,
  inputs: readonly Spec[],
  outputs: readonly Spec[],
  parameters: Record<string, string> = {},
): ModelConfig {
  const spec = ([n, datatype, dims]: Spec, optional: boolean) => ({ name: n, datatype, dims, optional });
  return {
    name,
    platform,
    backend,
    maxBatchSize: 64,
    inputs: inputs.map((s, i) => spec(s, i >= 2)),
    outputs: outputs.map((s) => spec(s, false)),
    decoupled,
    parameters,
  };
}

const TEXT_INPUTS: readonly Spec[] = [
  ['text_input', 'BYTES', [1]],
  ['max_tokens', 'INT32', [1]],
  ['stop_words', 'BYTES', [-1]],
  ['end_id', 'INT32', [1]],
  ['beam_width', 'INT32', [1]],
  ['stream', 'BOOL', [1]],
  ['num_return_sequences', 'INT32', [1]],
  ['exclude_input_in_output', 'BOOL', [1]],
];
const TEXT_OUTPUTS: readonly Spec[] = [
  ['text_output', 'BYTES', [-1]],
  ['sequence_index', 'INT32', [1]],
];

/** The official ensemble (2025-03 tensors: no token counts). */
export function ensemble(options: { decoupled?: boolean; counts?: boolean } = {}): ModelConfig {
  const counts: readonly Spec[] = options.counts ? [['num_output_tokens', 'INT32', [1]]] : [];
  const countInput: readonly Spec[] = options.counts ? [['return_num_output_tokens', 'BOOL', [1]]] : [];
  return config(
    'ensemble',
    'ensemble',
    '',
    options.decoupled ?? true,
    [...TEXT_INPUTS, ...countInput],
    [...TEXT_OUTPUTS, ...counts],
  );
}

/** `tensorrt_llm_bls`, accumulating its streamed text or not. */
export function bls(options: { accumulate: boolean }): ModelConfig {
  return config('tensorrt_llm_bls', '', 'python', true, TEXT_INPUTS, TEXT_OUTPUTS, {
    accumulate_tokens: String(options.accumulate),
  });
}

/** The raw `tensorrt_llm` model (2025-03 tensors). `echoes`: no `exclude_input_in_output` input. */
export function rawModel(options: { decoupled?: boolean; echoes?: boolean } = {}): ModelConfig {
  const exclude: readonly Spec[] = options.echoes ? [] : [['exclude_input_in_output', 'BOOL', [1]]];
  return config(
    'tensorrt_llm',
    '',
    'tensorrtllm',
    options.decoupled ?? true,
    [
      ['input_ids', 'INT32', [-1]],
      ['input_lengths', 'INT32', [1]],
      ['request_output_len', 'INT32', [1]],
      ['end_id', 'INT32', [1]],
      ['pad_id', 'INT32', [1]],
      ['beam_width', 'INT32', [1]],
      ['stop_words_list', 'INT32', [2, -1]],
      ['stop', 'BOOL', [1]],
      ['streaming', 'BOOL', [1]],
      ...exclude,
    ],
    [
      ['output_ids', 'INT32', [-1, -1]],
      ['sequence_length', 'INT32', [-1]],
    ],
  );
}

/** The LLM-API model: whole text so far on every streamed response, its own finish reason. */
export function llmApi(): ModelConfig {
  return config(
    'llmapi',
    '',
    'python',
    true,
    [
      ['text_input', 'BYTES', [-1]],
      ['sampling_param_max_tokens', 'INT32', [1]],
      ['streaming', 'BOOL', [1]],
      ['sampling_param_stop', 'BYTES', [-1]],
      ['stop', 'BOOL', [1]],
      ['return_finish_reason', 'BOOL', [1]],
    ],
    [
      ['text_output', 'BYTES', [-1]],
      ['finish_reason', 'BYTES', [-1]],
    ],
  );
}

// ---- a tokenizer ----

const FIRST_CHAR_ID = 10;

/** One id per character (code point + 10); ids below 10 are special, 2 is the end id. */
export const charTokenizer: Tokenizer = {
  encode: (s) => Array.from(s, (c) => c.codePointAt(0)! + FIRST_CHAR_ID),
  decode: (list, options) =>
    String.fromCodePoint(
      ...list
        .filter((id) => id >= FIRST_CHAR_ID || options?.skipSpecialTokens === false)
        .map((id) => Math.max(0, id - FIRST_CHAR_ID)),
    ),
  endId: 2,
};

/** The ids of `s` under {@link charTokenizer}. */
export function idsOf(s: string): number[] {
  return charTokenizer.encode(s);
}
