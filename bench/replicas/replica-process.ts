/**
 * One replica of `pnpm bench:replicas`, in a process of its own: a fake Triton, and in front of
 * its HTTP port a gate that lets at most `--slots` inference requests run at once and queues the
 * rest in arrival order. The fake alone has no capacity limit (every request runs at once, at its
 * pace); a GPU replica does (its in-flight batcher runs so many sequences), and that limit is what
 * adding replicas relieves. `--slots 0` means no gate. Prints one line when ready:
 * `replica grpc <url> http <url>`.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { startFakeTriton } from '@trtllm/testing';

const { values } = parseArgs({
  options: {
    slots: { type: 'string', default: '0' },
    'ttft-ms': { type: 'string', default: '0' },
    'itl-ms': { type: 'string', default: '0' },
  },
});
const slots = Number(values.slots);
const fake = await startFakeTriton({ ttftMs: Number(values['ttft-ms']), itlMs: Number(values['itl-ms']) });

if (slots === 0) {
  process.stdout.write(`replica grpc ${fake.grpcUrl} http ${fake.httpUrl}\n`);
} else {
  const upstream = new URL(fake.httpUrl);
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = (): void => {
    running -= 1;
    waiting.shift()?.();
  };
  const acquire = (): Promise<void> => {
    if (running < slots) {
      running += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      waiting.push(() => {
        running += 1;
        resolve();
      }),
    );
  };
  const forward = (req: IncomingMessage, res: ServerResponse, done: () => void): void => {
    const proxied = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    proxied.on('error', () => res.destroy());
    // The caller leaving cancels the generation, as it would on Triton itself.
    res.on('close', () => {
      proxied.destroy();
      done();
    });
    req.pipe(proxied);
  };
  const gate = createServer((req, res) => {
    const inference = /\/(generate|generate_stream|infer)$/.test(req.url ?? '');
    if (!inference) {
      forward(req, res, () => undefined);
      return;
    }
    let gone = false;
    res.once('close', () => {
      gone = true;
    });
    void acquire().then(() => {
      // A caller that left while queued frees its slot at once.
      if (gone) {
        release();
        return;
      }
      let freed = false;
      forward(req, res, () => {
        if (!freed) release();
        freed = true;
      });
    });
  });
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  const port = (gate.address() as AddressInfo).port;
  process.stdout.write(`replica grpc ${fake.grpcUrl} http http://127.0.0.1:${port}\n`);
}

const stop = (): void => {
  fake.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
