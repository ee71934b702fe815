import { type ModelSchema, type Transport, type TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { detectSchema } from '@trtllm/sdk/transport';
import { tritonDetail } from './api-error.js';
import { nearestName } from './nearest.js';
import { rawModelNeedsTokenizer, type TokenizerSetting } from './raw-model.js';

/** How the user named the settings the check reports on: CLI flags, or `createOpenAiServer` options. */
export interface BackendSettings {
  /** Where Triton is, as the user gave it (`Triton at grpc://localhost:8001`, or just `Triton`). */
  readonly triton: string;
  /** The setting that names the model (`--model`, `model`). */
  readonly model: string;
  /** The setting of the wait (`--triton-wait`, `tritonWaitMs`). */
  readonly wait: string;
  /** Replaces the transports' hints that name SDK functions with the setting the user has. */
  readonly hints?: (detail: string) => string;
}

/** What {@link waitForBackend} checks and how long it waits. */
export interface BackendCheck {
  readonly llm: TritonLlm;
  /** Lists the server's models when the model is missing; absent when the server was given a client. */
  readonly transport: Transport | undefined;
  readonly waitMs: number;
  /** Receives one line per failed attempt. */
  readonly log: (message: string) => void;
  readonly settings: BackendSettings;
  /**
   * Whether the client has a tokenizer, and the setting that gives it: the raw `tensorrt_llm`
   * model takes and returns token ids, so without one every text request would fail. Absent when
   * the server was given a client and cannot tell.
   */
  readonly tokenizer?: { readonly present: boolean; readonly setting: TokenizerSetting };
  readonly signal?: AbortSignal;
}

// One attempt's own calls are not retried: the loop here retries, and logs each attempt.
const ONCE = { attempts: 1 } as const;
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 2000;
// One attempt at a host that drops packets must not use up the whole wait.
const ATTEMPT_TIMEOUT_MS = 5000;
const LAST_ATTEMPT_MS = 1000;

/**
 * Waits until Triton answers and the model is ready, then reads the model's schema, so that a
 * server in front of a wrong address or model, or the raw model without a tokenizer, stops at
 * start instead of failing its first client (issue 53). An unreachable or not yet ready Triton, or
 * a model its repository has but not ready (loading, not loaded, failed to load: the line says
 * which, with Triton's reason), is tried again, one log line per attempt, until `waitMs` has
 * passed; a model the repository lacks fails at once, naming its models and the closest one.
 * Every failure is a `TritonLlmError` whose message is ready to print.
 */
export async function waitForBackend(check: BackendCheck): Promise<void> {
  const { llm, settings } = check;
  const started = performance.now();
  const hints = settings.hints ?? ((d: string) => d);
  let attempt = 0;
  for (;;) {
    attempt += 1;
    const remaining = check.waitMs - (performance.now() - started);
    const call = {
      retry: ONCE,
      // The last attempt, after a wait that took what was left, still gets time to answer: cut to
      // a millisecond, it would report its own deadline instead of what was wrong.
      timeoutMs: Math.min(ATTEMPT_TIMEOUT_MS, Math.max(LAST_ATTEMPT_MS, remaining)),
      ...(check.signal !== undefined ? { signal: check.signal } : {}),
    };
    let problem: string;
    // A model a BLS calls that the repository lacks: waiting cannot help, and it is not the user's setting.
    let missingCallee: TritonLlmError | undefined;
    try {
      // The model first: Triton's strict readiness (its default) keeps the whole server not ready
      // while any model of its repository failed to load, a model this server may not serve.
      if (await llm.modelReady(call)) {
        const callees = await calleesProblem(check, call);
        if (callees === undefined) break;
        if (callees instanceof TritonLlmError) missingCallee = callees;
        problem = String(callees);
      } else {
        const state = await modelState(check, llm.model, call);
        if (typeof state === 'object') throw notOnTriton(check, llm.model, state.missing);
        if (state !== undefined)
          problem = `model '${llm.model}' on ${settings.triton} is not ready (${state})`;
        else if (!(await llm.ready(call))) problem = `${settings.triton} answered but is not ready yet`;
        else problem = `model '${llm.model}' on ${settings.triton} is not ready yet`;
      }
    } catch (err) {
      const e = TritonLlmError.from(err, 'internal');
      if (e.code === 'cancelled' || e.field === settings.model) throw e;
      const detail = hints(tritonDetail(e).replace(/^Triton did not answer: /, ''));
      // A wrong port (gRPC at an HTTP port, or the reverse) answers, wrongly: waiting cannot help.
      if (!e.retryable && e.code !== 'deadline_exceeded') {
        throw new TritonLlmError(e.code, `${settings.triton}: ${detail}`, { cause: e });
      }
      problem = `${settings.triton} did not answer (${detail})`;
    }
    if (missingCallee !== undefined) throw missingCallee;
    const left = check.waitMs - (performance.now() - started);
    if (left <= 0) {
      throw new TritonLlmError(
        'unavailable',
        `${problem}; gave up after ${attempt} attempt${attempt === 1 ? '' : 's'} in ${seconds(check.waitMs)} (${settings.wait})`,
      );
    }
    const delay = Math.min(FIRST_DELAY_MS * 2 ** (attempt - 1), MAX_DELAY_MS, left);
    check.log(
      `${problem}; attempt ${attempt}, trying again in ${seconds(delay)} (${seconds(left)} left of ${settings.wait})`,
    );
    await sleep(delay, check.signal);
  }
  let schema: ModelSchema;
  try {
    schema = await llm.schema({
      retry: ONCE,
      ...(check.signal !== undefined ? { signal: check.signal } : {}),
    });
  } catch (err) {
    const e = TritonLlmError.from(err, 'internal');
    throw new TritonLlmError(
      e.code,
      `model '${llm.model}' on ${settings.triton}: ${hints(tritonDetail(e))}`,
      {
        cause: e,
      },
    );
  }
  const { tokenizer } = check;
  if (schema.flavor === 'tensorrt_llm' && tokenizer !== undefined && !tokenizer.present) {
    throw rawModelNeedsTokenizer(llm.model, settings.triton, tokenizer.setting);
  }
}

/**
 * Why a model that is not ready is not: `missing` when the server does not have it (with the
 * server's models, when they can be listed), to fail at once, or the state its repository gives (a
 * load failure, loading, not loaded), to wait on; or undefined when the server says nothing more.
 */
async function modelState(
  check: BackendCheck,
  model: string,
  call: { readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<{ readonly missing: readonly string[] | undefined } | string | undefined> {
  const { transport } = check;
  // The repository index lists every model, loaded or not, with its state and a load failure's
  // reason: a model that failed to load, or was never loaded (explicit model control), is there
  // but not ready, not missing. ModelStatistics, the fallback, lists only the loaded ones.
  if (transport?.repositoryIndex !== undefined) {
    const index = await transport.repositoryIndex(call);
    const own = index.filter((m) => m.name === model);
    // Ready between the two calls: the next attempt finds it so.
    if (own.some((m) => m.state === 'READY')) return undefined;
    const entry = own.find((m) => m.state !== '') ?? own[0];
    if (entry !== undefined) {
      if (entry.state === '') return 'not loaded';
      return entry.reason === '' ? entry.state : `${entry.state}: ${entry.reason}`;
    }
    return { missing: index.map((m) => m.name) };
  }
  if (transport !== undefined) {
    const models = (await transport.modelStatistics(undefined, undefined, call)).map((s) => s.name);
    return models.includes(model) ? undefined : { missing: models };
  }
  return { missing: undefined };
}

/** "model 'x' is not on Triton (its models: ...); did you mean 'y'? check --model", for the user's setting. */
function notOnTriton(
  check: BackendCheck,
  model: string,
  models: readonly string[] | undefined,
): TritonLlmError {
  const { settings } = check;
  return new TritonLlmError(
    'not_found',
    `model '${model}' is not on ${settings.triton}${modelList(models)}; ${didYouMean(model, models)}check ${settings.model}`,
    { model, field: settings.model },
  );
}

function modelList(models: readonly string[] | undefined): string {
  if (models === undefined) return '';
  if (models.length === 0) return ' (it has no models)';
  return ` (its models: ${[...new Set(models)].sort().join(', ')})`;
}

function didYouMean(model: string, models: readonly string[] | undefined): string {
  const near = models !== undefined ? nearestName(model, models) : undefined;
  return near !== undefined ? `did you mean '${near}'? ` : '';
}

/** A model a BLS calls, and where that name comes from. */
interface Callee {
  readonly name: string;
  readonly from: string;
}

/**
 * The models every request through a BLS model (NVIDIA's `tensorrt_llm_bls`) goes through: the one
 * its config parameter `tensorrt_llm_model_name` names (`tensorrt_llm` without it, as NVIDIA's code
 * reads it: a value left as the template's `${...}` is taken as it is), and `preprocessing` and
 * `postprocessing`, which its code calls by those names. A draft model or multimodal encoders serve
 * only requests that ask for them, which this server does not send.
 */
function blsCallees(parameters: Readonly<Record<string, string>>): Callee[] {
  const llmModel = parameters.tensorrt_llm_model_name;
  return [
    llmModel === undefined
      ? { name: 'tensorrt_llm', from: "NVIDIA's BLS calls it by that name without a tensorrt_llm_model_name" }
      : { name: llmModel, from: 'its config parameter tensorrt_llm_model_name' },
    { name: 'preprocessing', from: "NVIDIA's BLS calls it by that name" },
    { name: 'postprocessing', from: "NVIDIA's BLS calls it by that name" },
  ];
}

/**
 * Whether the models a ready BLS calls are ready too. Triton loads a BLS model without them (it
 * cannot know what the model's code calls), and then fails every request with "Model
 * 'tensorrt_llm' is not ready": undefined when all are ready, the problem to wait on when one is
 * not, or the error to stop on when the repository lacks one. Unchecked without a transport.
 */
async function calleesProblem(
  check: BackendCheck,
  call: {
    readonly timeoutMs: number;
    readonly retry: { readonly attempts: number };
    readonly signal?: AbortSignal;
  },
): Promise<TritonLlmError | string | undefined> {
  const { llm, settings, transport } = check;
  if (transport === undefined) return undefined;
  const config = await llm.modelConfig(call);
  let flavor: string;
  try {
    flavor = detectSchema(config).flavor;
  } catch {
    // Not a model this server can serve: the schema read after the wait says why.
    return undefined;
  }
  if (flavor !== 'bls') return undefined;
  for (const callee of blsCallees(config.parameters)) {
    const ready = await transport.modelReady(callee.name, undefined, call).catch((err: unknown) => {
      // A transport that reports a model the server lacks as not found: it is not ready all the same.
      if (TritonLlmError.from(err).code === 'not_found') return false;
      throw err;
    });
    if (ready) continue;
    const state = await modelState(check, callee.name, call);
    const calls = `model '${llm.model}' on ${settings.triton} calls '${callee.name}' (${callee.from})`;
    if (typeof state === 'string') return `${calls}, which is not ready (${state})`;
    if (state === undefined) return `${calls}, which is not ready yet`;
    return new TritonLlmError(
      'not_found',
      `${calls}, which is not on ${settings.triton}${modelList(state.missing)}; ${
        callee.name.startsWith('${')
          ? "that is a placeholder of NVIDIA's config template: fill the BLS model's config.pbtxt (tools/fill_template.py)"
          : `${didYouMean(callee.name, state.missing)}check the BLS model's config.pbtxt or Triton's model repository`
      }`,
      { model: llm.model },
    );
  }
  return undefined;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new TritonLlmError('cancelled', 'the wait for Triton was aborted'));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new TritonLlmError('cancelled', 'the wait for Triton was aborted'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
