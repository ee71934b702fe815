import { invalidArgument, TritonLlmError } from '../errors.js';
import type { GenerationEvent } from '../generation/events.js';
import type { GenerateOptions } from '../generation/options.js';
import type { ModelSchema } from '../models/schema.js';
import type { ModelFlavor } from '../request/request.js';
import { checkOptionNames } from '../request/validate.js';
import type { RetryOptions, RetryPolicy } from '../retry.js';
import type { TelemetryOptions } from '../telemetry/telemetry.js';
import type { Tokenizer } from '../text/tokenizer.js';
import type { CallOptions, Transport } from '../transport.js';

/** Options of {@link TritonLlm}. */
export interface TritonLlmOptions {
  /** `grpcTransport(...)` from `@trtllm/grpc` or `httpTransport(...)` from `@trtllm/http`. */
  readonly transport: Transport;
  /** The deployed model's name: `ensemble`, `tensorrt_llm_bls`, `tensorrt_llm`, ... */
  readonly model: string;
  /** Pin a model version; the server picks when absent. */
  readonly modelVersion?: string;
  /** Expected flavor; when given, a deployed model of another flavor is refused with a clear error. */
  readonly flavor?: ModelFlavor;
  /** Turns text into ids for the raw `tensorrt_llm` model (see `@trtllm/tokenizers`). */
  readonly tokenizer?: Tokenizer;
  /**
   * Defaults for every call (per-call options win): `timeoutMs` and `headers` apply to every
   * request of this client, `idleTimeoutMs` to generation.
   */
  readonly defaults?: Pick<GenerateOptions, 'timeoutMs' | 'idleTimeoutMs' | 'headers'>;
  /**
   * Retries of calls that fail before the server answers (see {@link RetryOptions}); on by
   * default with 3 attempts. Calls can override it field by field.
   */
  readonly retry?: RetryOptions;
  /** Where warnings go (one per client and model when an early end cannot stop the server). Default: console.warn. */
  readonly logger?: {
    /** Receives one human-readable warning; must not throw. */
    warn(message: string): void;
  };
  /** Observes every request's lifecycle: a hook for logging, metrics and tracing. */
  readonly onEvent?: (event: GenerationEvent) => void;
  /** OpenTelemetry spans and GenAI metrics, off until a tracer or meter is given (see {@link TelemetryOptions}). */
  readonly telemetry?: TelemetryOptions;
}

// Every option's name, typed against the interfaces so that a new option cannot be left out: a key
// that is none of these (`modle`, `timeout`) is refused with the closest name (issue 53).
const OPTION_NAMES: Readonly<Record<keyof TritonLlmOptions, true>> = {
  transport: true,
  model: true,
  modelVersion: true,
  flavor: true,
  tokenizer: true,
  defaults: true,
  retry: true,
  logger: true,
  onEvent: true,
  telemetry: true,
};
const DEFAULTS_NAMES: Readonly<Record<keyof NonNullable<TritonLlmOptions['defaults']>, true>> = {
  timeoutMs: true,
  idleTimeoutMs: true,
  headers: true,
};

/** The names of {@link TritonLlm}'s options and of its `defaults` are all known ones. */
export function checkClientOptionNames(options: TritonLlmOptions): void {
  checkOptionNames(options, OPTION_NAMES);
  if (typeof options.defaults === 'object' && options.defaults !== null)
    checkOptionNames(options.defaults, DEFAULTS_NAMES, 'defaults.');
}

/** Options of the client's unary calls (health, metadata, config, statistics, infer). */
export interface ClientCallOptions extends CallOptions {
  /** Retries of this call, field by field over the client's `retry`. */
  readonly retry?: RetryOptions;
}

// The per-call options by name, typed as OPTION_NAMES is: `{ timeoutMS: 5 }` passed to a call is
// refused with the closest name rather than ignored (a misspelt deadline would leave none).
const CALL_NAMES: Readonly<Record<keyof ClientCallOptions, true>> = {
  signal: true,
  timeoutMs: true,
  headers: true,
  retryPlan: true,
  retry: true,
};
const GENERATE_NAMES: Readonly<Record<keyof GenerateOptions, true>> = {
  signal: true,
  timeoutMs: true,
  idleTimeoutMs: true,
  headers: true,
  retry: true,
};
const BATCH_NAMES: Readonly<Record<keyof GenerateOptions | 'concurrency' | 'batch', true>> = {
  ...GENERATE_NAMES,
  concurrency: true,
  batch: true,
};

/**
 * The names of one call's options are all known ones: `generate`/`stream` (`generate`), `generateBatch`
 * (`batch`) or a unary call (`call`). A loop over the object's few keys, skipped when there is none.
 */
export function checkCallOptionNames(options: object | undefined, kind: 'generate' | 'batch' | 'call'): void {
  if (typeof options !== 'object' || options === null) return;
  checkOptionNames(
    options,
    kind === 'generate' ? GENERATE_NAMES : kind === 'batch' ? BATCH_NAMES : CALL_NAMES,
  );
}

/** Deadlines must be positive milliseconds: a zero or negative one would fail every call at once. */
export function checkCallOptions(
  options: { timeoutMs?: number; idleTimeoutMs?: number },
  prefix: string,
): void {
  for (const field of ['timeoutMs', 'idleTimeoutMs'] as const) {
    const value = options[field];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
      throw invalidArgument(`${prefix}${field}`, value, 'must be a positive number of milliseconds');
    }
  }
}

/** The options of one call, resolved against the client's, and the schema they apply to. */
export interface PreparedCall {
  readonly schema: ModelSchema;
  readonly options: GenerateOptions;
  readonly retry: RetryPolicy;
}

/** The deployed model must be what the client was told it is (`flavor`) and what the call needs. */
export function checkDeployed(
  schema: ModelSchema,
  model: string,
  expected: { readonly flavor?: string | undefined; readonly streaming?: boolean },
): void {
  if (expected.flavor !== undefined && expected.flavor !== schema.flavor) {
    throw new TritonLlmError(
      'failed_precondition',
      `model '${model}' is deployed as flavor '${schema.flavor}', not '${expected.flavor}'`,
      { model },
    );
  }
  if (expected.streaming === true && !schema.decoupled) {
    throw new TritonLlmError(
      'failed_precondition',
      `model '${model}' is not decoupled; streaming needs the model deployed with decoupled_mode: true ` +
        '(model_transaction_policy { decoupled: true }), or call generate()',
      { model },
    );
  }
}

/** The call's options with what the schema read (begun at `started`) left of its deadline. */
export function afterSchemaRead(options: GenerateOptions, started: number, model: string): GenerateOptions {
  if (options.timeoutMs === undefined) return options;
  const left = options.timeoutMs - (performance.now() - started);
  if (left <= 0) throw schemaReadDeadline(options.timeoutMs, model);
  return { ...options, timeoutMs: left };
}

/** A call's deadline that passed before the model config it waited for was read. */
export function schemaReadDeadline(timeoutMs: number, model: string): TritonLlmError {
  return new TritonLlmError(
    'deadline_exceeded',
    `the ${timeoutMs} ms deadline passed while reading the model config`,
    { model },
  );
}
