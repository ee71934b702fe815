/**
 * Child process of the overhead benchmark and of bench:validate: one fake Triton (with the delays of
 * FAKE_TTFT_MS / FAKE_ITL_MS) in a process of its own, so that its
 * CPU is not charged to any client. Prints `{"grpcUrl","httpUrl"}` once listening; stops on SIGTERM
 * or when its parent closes stdin.
 */
// The counts perf_analyzer needs from ModelStatistics (the perf-analyzer variant; see the module).
import '../validate/fake-statistics.js';
import { startFakeTriton } from '@trtllm/testing';

const ttftMs = Number(process.env.FAKE_TTFT_MS ?? '0');
const itlMs = Number(process.env.FAKE_ITL_MS ?? '0');
// FAKE_MAX_STREAMS limits the streams of each gRPC connection, as proxies do: the client must open
// more connections past the limit (with BENCH_GRPC_MAX_CONNECTIONS for the SDK's variants).
const maxStreams = process.env.FAKE_MAX_STREAMS;
// FAKE_TOKENS_PER_TURN: tokens a generation sends back to back (1: in turn, as in-flight batching).
const tokensPerTurn = process.env.FAKE_TOKENS_PER_TURN;
// FAKE_BATCH_STEP_MS: one in-flight batching clock, every live generation's next token at each step.
const batchStepMs = process.env.FAKE_BATCH_STEP_MS;
const triton = await startFakeTriton({
  grpcPort: 0,
  httpPort: 0,
  ttftMs,
  itlMs,
  ...(maxStreams !== undefined && maxStreams !== '' ? { grpcMaxConcurrentStreams: Number(maxStreams) } : {}),
  ...(tokensPerTurn !== undefined && tokensPerTurn !== '' ? { tokensPerTurn: Number(tokensPerTurn) } : {}),
  ...(batchStepMs !== undefined && batchStepMs !== '' ? { batchStepMs: Number(batchStepMs) } : {}),
});
process.stdout.write(`${JSON.stringify({ grpcUrl: triton.grpcUrl, httpUrl: triton.httpUrl })}\n`);

let closing = false;
const stop = () => {
  if (closing) return;
  closing = true;
  // A server left with thousands of streams may take long to close; exiting frees everything.
  const force = setTimeout(() => process.exit(0), 2000);
  triton.close().finally(() => {
    clearTimeout(force);
    process.exit(0);
  });
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
