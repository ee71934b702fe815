/**
 * A fake Triton in a process of its own, for tests that need the client alone in the test
 * process (heap samples, CPU) or a server to kill. Prints one JSON line when ready, then answers
 * `{ id, ask: 'activeRequests' | 'events' }` messages on the IPC channel.
 */
import { startFakeTriton } from '@trtllm/testing';

const options = JSON.parse(process.argv[2] ?? '{}') as Parameters<typeof startFakeTriton>[0];
const fake = await startFakeTriton(options);
type Ask = 'activeRequests' | 'events' | 'cpuUsage';
process.on('message', (message: { id: number; ask: Ask }) => {
  const answer =
    message.ask === 'activeRequests'
      ? fake.activeRequests()
      : message.ask === 'cpuUsage'
        ? process.cpuUsage()
        : fake.events();
  process.send?.({ id: message.id, answer });
});
process.once('disconnect', () => {
  void fake.close().finally(() => process.exit(0));
});
process.stdout.write(
  `${JSON.stringify({ grpcUrl: fake.grpcUrl, httpUrl: fake.httpUrl, grpcPort: fake.grpcPort, httpPort: fake.httpPort })}\n`,
);
