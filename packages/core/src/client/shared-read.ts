import { callerAbortError, type TritonLlmError } from '../errors.js';
import { schemaReadDeadline } from './options.js';

/** What ends one caller's wait for a read it shares with others. */
export interface OwnWait {
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs?: number | undefined;
}

interface Read<T> {
  readonly value: Promise<T>;
  /** Ends the read on the wire once no caller waits for it. */
  readonly stop: AbortController;
  waiting: number;
  settled: boolean;
}

/**
 * One read that every caller of a client waits for (the model config), made once and kept once it
 * succeeds. No one caller's signal or deadline ends it: each ends only that caller's wait, with that
 * caller's error, so a request aborted at once does not fail the requests started beside it. When the
 * last caller waiting gives up, the read ends on the wire too (a script that aborts still exits).
 */
export class SharedRead<T> {
  private read: Read<T> | undefined;

  /** Drops the read, finished or not: the next caller starts another. */
  forget(): void {
    this.read = undefined;
  }

  /** The read's value for one caller; `start` makes the read when none is kept or under way. */
  wait(start: (signal: AbortSignal) => Promise<T>, own: OwnWait, model: string): Promise<T> {
    const { signal, timeoutMs } = own;
    // A caller that has already given up starts nothing.
    if (signal?.aborted === true && this.read === undefined)
      return Promise.reject(abortedWait(signal, model));
    const read = this.read ?? this.begin(start);
    // A kept value (a failed read is never kept) answers at once.
    if (read.settled) return read.value;
    read.waiting++;
    if (signal === undefined && timeoutMs === undefined) {
      return read.value.finally(() => {
        read.waiting--;
      });
    }
    return new Promise<T>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let waiting = true;
      const leave = (): void => {
        if (!waiting) return;
        waiting = false;
        read.waiting--;
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const giveUp = (err: TritonLlmError): void => {
        leave();
        if (read.waiting === 0 && !read.settled) {
          read.stop.abort();
          if (this.read === read) this.read = undefined;
        }
        reject(err);
      };
      const onAbort = (): void => giveUp(abortedWait(signal as AbortSignal, model));
      read.value.then(
        (value) => {
          leave();
          resolve(value);
        },
        (err: unknown) => {
          leave();
          reject(err);
        },
      );
      if (signal?.aborted === true) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          giveUp(schemaReadDeadline(timeoutMs, model));
        }, timeoutMs);
      }
    });
  }

  private begin(start: (signal: AbortSignal) => Promise<T>): Read<T> {
    const stop = new AbortController();
    const read: Read<T> = {
      stop,
      waiting: 0,
      settled: false,
      value: start(stop.signal).then(
        (value) => {
          read.settled = true;
          return value;
        },
        (err: unknown) => {
          read.settled = true;
          if (this.read === read) this.read = undefined;
          throw err;
        },
      ),
    };
    this.read = read;
    return read;
  }
}

/** The caller's own abort, worded as the transports word it. */
function abortedWait(signal: AbortSignal, model: string): TritonLlmError {
  return callerAbortError(signal, `ModelConfig '${model}'`, { model });
}
