import { type ModelSchema, type Transport, type TritonLlm, TritonLlmError } from '@trtllm/sdk';
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
    try {
      // The model first: Triton's strict readiness (its default) keeps the whole server not ready
      // while any model of its repository failed to load, a model this server may not serve.
      if (await llm.modelReady(call)) break;
      const state = await modelState(check, call);
      if (state instanceof TritonLlmError) throw state;
      if (state !== undefined) problem = `model '${llm.model}' on ${settings.triton} is not ready (${state})`;
      else if (!(await llm.ready(call))) problem = `${settings.triton} answered but is not ready yet`;
      else problem = `model '${llm.model}' on ${settings.triton} is not ready yet`;
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
 * Why a model that is not ready is not: the error of a model the server does not have, to throw at
 * once, or the state its repository gives (a load failure, loading, not loaded), to wait on; or
 * undefined when the server says nothing more.
 */
async function modelState(
  check: BackendCheck,
  call: { readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<TritonLlmError | string | undefined> {
  const { llm, settings, transport } = check;
  // The repository index lists every model, loaded or not, with its state and a load failure's
  // reason: a model that failed to load, or was never loaded (explicit model control), is there
  // but not ready, not missing. ModelStatistics, the fallback, lists only the loaded ones.
  let models: string[] | undefined;
  if (transport?.repositoryIndex !== undefined) {
    const index = await transport.repositoryIndex(call);
    const own = index.filter((m) => m.name === llm.model);
    // Ready between the two calls: the next attempt finds it so.
    if (own.some((m) => m.state === 'READY')) return undefined;
    const entry = own.find((m) => m.state !== '') ?? own[0];
    if (entry !== undefined) {
      if (entry.state === '') return 'not loaded';
      return entry.reason === '' ? entry.state : `${entry.state}: ${entry.reason}`;
    }
    models = index.map((m) => m.name);
  } else if (transport !== undefined) {
    models = (await transport.modelStatistics(undefined, undefined, call)).map((s) => s.name);
    if (models.includes(llm.model)) return undefined;
  }
  const near = models !== undefined ? nearestName(llm.model, models) : undefined;
  const list =
    models === undefined
      ? ''
      : models.length === 0
        ? ' (it has no models)'
        : ` (its models: ${[...new Set(models)].sort().join(', ')})`;
  return new TritonLlmError(
    'not_found',
    `model '${llm.model}' is not on ${settings.triton}${list}; ${
      near !== undefined ? `did you mean '${near}'? ` : ''
    }check ${settings.model}`,
    { model: llm.model, field: settings.model },
  );
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
