/**
 * The floor of an OpenAI front end written in Node, for `pnpm bench:openai`: streaming
 * `/v1/completions` and nothing else, upstream through the overhead benchmark's socket probe
 * (HTTP/2 frames read in JavaScript, no HPACK, no flow control, no errors), downstream through
 * node:http with the same write policy as `trtllm-openai` (one write per response per event-loop
 * round). No validation, no usage, no stop sequences, no cancellation: what any Node server must
 * spend per chunk, whatever its code, so `trtllm-openai`'s distance to it is what its own code
 * costs and the distance from it to openai_trtllm is what Node costs.
 *
 * Usage: node --import tsx bench/openai/node-floor.ts <triton gRPC URL>; prints the address it serves.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { socketProbeVariant } from '../overhead/variants/socket-probe.js';

const triton = process.argv[2];
if (triton === undefined) throw new Error('usage: node-floor.ts <triton gRPC URL>');
const probe = socketProbeVariant({ grpcUrl: triton, httpUrl: triton });
const created = Math.floor(Date.now() / 1000);
let nextId = 0;

/** Events of one response gathered during a round of I/O, written once that round is over. */
class Batched {
  private pending = '';
  private scheduled = false;
  private readonly flush = (): void => {
    this.scheduled = false;
    const text = this.pending;
    this.pending = '';
    if (text !== '') this.res.write(text);
  };

  constructor(private readonly res: ServerResponse) {}

  send(text: string): void {
    this.pending += text;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  end(text: string): void {
    this.res.end(this.pending + text);
    this.pending = '';
  }
}

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as {
      prompt: string;
      max_tokens: number;
      model: string;
    };
    const id = nextId++;
    const head = `data: {"id":"cmpl-${id}","object":"text_completion","created":${created},"model":${JSON.stringify(body.model)},"choices":[{"index":0,"text":`;
    const tail = ',"logprobs":null,"finish_reason":null}]}\n\n';
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    const out = new Batched(res);
    probe
      .streamText(body.prompt, body.max_tokens, id, (text) => {
        if (text.length > 0) out.send(head + JSON.stringify(text) + tail);
      })
      .then(
        () => out.end(`${head}"","logprobs":null,"finish_reason":"length"}]}\n\ndata: [DONE]\n\n`),
        () => res.destroy(),
      );
  });
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`node floor listening at http://127.0.0.1:${port}/v1\n`);
});
