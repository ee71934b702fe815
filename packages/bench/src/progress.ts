import { SingleBar } from 'cli-progress';
import type { BenchHooks } from './run.js';

/**
 * Hooks that draw one cli-progress bar per concurrency level on `stream` (stderr by default, so
 * the table on stdout stays clean to pipe). cli-progress draws nothing when the stream is no TTY.
 */
export function progressHooks(stream: NodeJS.WritableStream = process.stderr): BenchHooks & { stop(): void } {
  let bar: SingleBar | undefined;
  let errors = 0;
  return {
    onLevelStart: ({ concurrency, requests }) => {
      errors = 0;
      bar = new SingleBar({
        stream,
        format:
          'concurrency {concurrency} |{bar}| {value}/{total} requests | {errors} errors | {duration_formatted}',
        hideCursor: true,
        barsize: 30,
      });
      bar.start(requests, 0, { concurrency, errors });
    },
    onRequestEnd: (sample) => {
      if (sample.error !== undefined) errors += 1;
      bar?.increment(1, { errors });
    },
    onLevelEnd: () => {
      bar?.stop();
      bar = undefined;
    },
    stop: () => bar?.stop(),
  };
}
