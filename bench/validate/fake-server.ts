/**
 * Child process of the validation: the fake Triton with injected delays, in a process of its own so
 * that the tools measured against it do not share its event loop. Prints `{"grpcUrl","httpUrl"}`
 * once listening; stops on SIGTERM or when its parent closes stdin. Same protocol as
 * bench/overhead/fake-server.ts, plus the statistics perf_analyzer needs (see fake-statistics.ts).
 */
import './fake-statistics.js';
import { startFakeTriton } from '@trtllm/testing';

const ttftMs = Number(process.env.FAKE_TTFT_MS ?? '0');
const itlMs = Number(process.env.FAKE_ITL_MS ?? '0');
const triton = await startFakeTriton({ grpcPort: 0, httpPort: 0, ttftMs, itlMs });
process.stdout.write(`${JSON.stringify({ grpcUrl: triton.grpcUrl, httpUrl: triton.httpUrl })}\n`);

let closing = false;
const stop = () => {
  if (closing) return;
  closing = true;
  const force = setTimeout(() => process.exit(0), 2000);
  triton.close().finally(() => {
    clearTimeout(force);
    process.exit(0);
  });
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
