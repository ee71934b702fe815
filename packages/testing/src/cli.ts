/**
 * `trtllm-fake-triton`: the fake Triton as a process, for demos and for clients in other languages.
 * Prints one line when ready (where it listens), with `--log` one line per request as it ends, and
 * exits 0 on SIGINT or SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startFakeTriton } from './server.js';
import type { FakeEvent, FakeTriton } from './types.js';

const USAGE =
  'usage: trtllm-fake-triton [--grpc-port 8001] [--http-port 8000] [--host 127.0.0.1] [--ttft-ms N] [--itl-ms N] [--tokens-per-turn N] [--batch-step-ms N] [--cors] [--log]\n  [--model-control-mode explicit [--load-model NAME]...]';

/** How the log names the end of a request (Triton's verbose log says the same in more words). */
const OUTCOMES: Partial<Record<FakeEvent['event'], string>> = {
  completed: 'done',
  cancelled: 'cancelled',
  stopped: 'stopped',
  error: 'error',
};

/** The longest delay a Node timer takes; the watch below re-arms when it runs out. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function logRequests(fake: FakeTriton, write: (line: string) => void): void {
  // The fake offers no listener, but waitForEvent runs its predicate on every event as it is
  // recorded: one that never matches is a listener. Printed events are forgotten, so the log of a
  // long-running server does not grow.
  const watch = (): void => {
    fake
      .waitForEvent((e) => {
        const outcome = OUTCOMES[e.event];
        if (outcome === undefined) return false;
        const id = e.id === '' ? '-' : e.id;
        write(
          `${new Date(e.ts).toISOString()} ${e.protocol} ${e.model} request ${id}: ${outcome}, ${e.tokens} tokens`,
        );
        fake.clearEvents();
        return false;
      }, MAX_TIMER_MS)
      .catch(watch);
  };
  watch();
}

function portOrNumber(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`--${name} must be a non-negative integer, got '${value}'`);
  return n;
}

function atLeastOne(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number >= 1, got '${value}'`);
  return n;
}

/** `--model-control-mode` and `--load-model` as Triton reads them: `none` is the default mode. */
function modelControl(
  mode: string | undefined,
  load: readonly string[] | undefined,
): { modelControl?: 'explicit'; loadModels?: readonly string[] } {
  if (mode === undefined || mode === 'none') {
    if (load !== undefined) throw new Error('--load-model needs --model-control-mode explicit');
    return {};
  }
  if (mode !== 'explicit') throw new Error(`--model-control-mode must be none or explicit, got '${mode}'`);
  return { modelControl: 'explicit', ...(load !== undefined ? { loadModels: load } : {}) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'grpc-port': { type: 'string' },
      'http-port': { type: 'string' },
      host: { type: 'string' },
      'ttft-ms': { type: 'string' },
      'itl-ms': { type: 'string' },
      'tokens-per-turn': { type: 'string' },
      'batch-step-ms': { type: 'string' },
      cors: { type: 'boolean' },
      log: { type: 'boolean' },
      // Triton's own flag names, so a script written for Triton starts the fake the same way.
      'model-control-mode': { type: 'string' },
      'load-model': { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const fake = await startFakeTriton({
    grpcPort: portOrNumber('grpc-port', values['grpc-port'], 8001),
    httpPort: portOrNumber('http-port', values['http-port'], 8000),
    ...(values.host !== undefined ? { host: values.host } : {}),
    ttftMs: portOrNumber('ttft-ms', values['ttft-ms'], 0),
    itlMs: portOrNumber('itl-ms', values['itl-ms'], 0),
    ...(values['tokens-per-turn'] !== undefined
      ? { tokensPerTurn: atLeastOne('tokens-per-turn', values['tokens-per-turn']) }
      : {}),
    ...(values['batch-step-ms'] !== undefined
      ? { batchStepMs: atLeastOne('batch-step-ms', values['batch-step-ms']) }
      : {}),
    cors: values.cors ?? false,
    ...modelControl(values['model-control-mode'], values['load-model']),
  });
  process.stdout.write(`fake Triton ready: grpc ${fake.grpcUrl} http ${fake.httpUrl}\n`);
  if (values.log) logRequests(fake, (line) => process.stdout.write(`${line}\n`));
  const stop = () => {
    fake.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`trtllm-fake-triton: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`trtllm-fake-triton: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
  process.exit(2);
});
