import { TritonLlmError } from '../errors.js';
import { nearestKey } from '../request/validate.js';
import type { RepositoryModel } from '../transport.js';

// A repository of hundreds of models would bury the message; the closest name is still given.
const MAX_LISTED = 20;

/**
 * `err` told in the caller's words when it says that `model` is not found: the models the server
 * has (its repository index), the closest name (`did you mean 'ensemble'?`), or why a model of
 * that name is not available. The index is asked for only here, after the server said not found,
 * so the happy path never pays for it; when it cannot be read, `err` stands as it was.
 */
export async function explainModelNotFound(
  err: unknown,
  model: string,
  index: (() => Promise<RepositoryModel[]>) | undefined,
): Promise<unknown> {
  if (!(err instanceof TritonLlmError) || err.code !== 'not_found' || index === undefined) return err;
  let models: RepositoryModel[];
  try {
    models = await index();
  } catch {
    return err;
  }
  return new TritonLlmError('not_found', `${err.message}; ${serverModels(model, models)}`, {
    retryable: err.retryable,
    ...(err.serverMessage !== undefined ? { serverMessage: err.serverMessage } : {}),
    ...(err.requestId !== undefined ? { requestId: err.requestId } : {}),
    model: err.model ?? model,
    ...(err.httpStatus !== undefined ? { httpStatus: err.httpStatus } : {}),
    ...(err.grpcStatus !== undefined ? { grpcStatus: err.grpcStatus } : {}),
    ...(err.cause !== undefined ? { cause: err.cause } : {}),
  });
}

/** What the server has, said for someone who asked for `model`. */
function serverModels(model: string, models: readonly RepositoryModel[]): string {
  const same = models.find((m) => m.name === model);
  if (same !== undefined) {
    // In the repository, but not loaded (a failed load, a version that is not there).
    const state = same.state === '' ? 'not ready' : same.state;
    return `the server's repository has '${model}', ${state}${same.reason === '' ? '' : `: ${same.reason}`}`;
  }
  const names = [...new Set(models.map((m) => m.name))];
  if (names.length === 0) return 'the server has no models';
  const near = nearestKey(model, names);
  const shown = names.slice(0, MAX_LISTED).join(', ');
  const more = names.length > MAX_LISTED ? ` and ${names.length - MAX_LISTED} more` : '';
  return `the server has ${shown}${more}${near === undefined ? '' : `; did you mean '${near}'?`}`;
}
