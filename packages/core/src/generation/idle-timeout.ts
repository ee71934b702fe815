import { TritonLlmError } from '../errors.js';

/**
 * `pending`, or a `deadline_exceeded` error once `idleMs` pass without it settling. On expiry
 * `expire` ends the request first; the error follows once it has.
 */
export function withIdleTimeout<T>(
  pending: Promise<T>,
  idleMs: number,
  expire: () => Promise<void>,
  requestId: string,
  model: string,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      // From here the idle timeout is the answer: the cancellation it causes may end the pending
      // read first, and must not be reported instead.
      expired = true;
      void expire().finally(() =>
        reject(
          new TritonLlmError(
            'deadline_exceeded',
            `no response from the server for ${idleMs} ms (idle timeout)`,
            {
              requestId,
              model,
            },
          ),
        ),
      );
    }, idleMs);
    pending.then(
      (v) => {
        clearTimeout(timer);
        if (!expired) resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        if (!expired) reject(e);
      },
    );
  });
}
