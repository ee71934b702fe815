/**
 * Child process of the soak benchmark: the fake Triton (delays from FAKE_TTFT_MS / FAKE_ITL_MS) in a
 * process of its own, so the client's memory is the client's. Prints `{"grpcUrl","httpUrl"}` once
 * listening; on SIGTERM (or when stdin closes) writes its CPU time to SOAK_FAKE_CPU_FILE and exits.
 */
import { writeFileSync } from 'node:fs';
import { startFakeTriton } from '@trtllm/testing';

const triton = await startFakeTriton({
  grpcPort: 0,
  httpPort: 0,
  ttftMs: Number(process.env.FAKE_TTFT_MS ?? '0'),
  itlMs: Number(process.env.FAKE_ITL_MS ?? '0'),
});
// The fake logs every request for tests to read; an hour of load would make that log the fake's
// biggest cost, and nobody reads it here.
setInterval(() => triton.clearEvents(), 10_000);
process.stdout.write(`${JSON.stringify({ grpcUrl: triton.grpcUrl, httpUrl: triton.httpUrl })}\n`);

// The client has closed by the time the parent stops this process: exiting frees everything.
const stop = () => {
  const file = process.env.SOAK_FAKE_CPU_FILE;
  if (file !== undefined) {
    const cpu = process.cpuUsage();
    writeFileSync(file, JSON.stringify({ cpuUs: cpu.user + cpu.system, uptimeS: process.uptime() }));
  }
  process.exit(0);
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
