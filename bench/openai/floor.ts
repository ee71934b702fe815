/**
 * What the two floors of `pnpm bench:openai` (node-floor.ts on node:http, net-floor.ts on node:net)
 * share: Triton upstream through the overhead benchmark's socket probe, the `/v1/completions` events
 * as fixed text around the token, and one write per response per event-loop round, the write policy
 * of `trtllm-openai`. Only how the HTTP/1.1 exchange is read and written differs between them.
 */
import { socketProbeVariant } from '../overhead/variants/socket-probe.js';

/** The body fields a floor reads; nothing is checked. */
export interface CompletionBody {
  readonly prompt: string;
  readonly max_tokens: number;
  readonly model: string;
}

/** How a floor puts text on the wire: `write` for the events of one round, `end` for the last ones. */
export interface ResponseSink {
  write(text: string): void;
  end(text: string): void;
  fail(): void;
}

/** The Triton gRPC URL after `--triton` (grpc:// or http://), or the usage error of `script`. */
function tritonArgument(script: string): string {
  const at = process.argv.indexOf('--triton');
  const url = at < 0 ? undefined : process.argv[at + 1];
  if (url === undefined) throw new Error(`usage: ${script} --triton <triton gRPC URL>`);
  return url.replace(/^grpc:/, 'http:');
}

/** Events of one response gathered during a round of I/O, written once that round is over. */
class Batched {
  private pending = '';
  private scheduled = false;
  private readonly flush = (): void => {
    this.scheduled = false;
    const text = this.pending;
    this.pending = '';
    if (text !== '') this.sink.write(text);
  };

  constructor(private readonly sink: ResponseSink) {}

  send(text: string): void {
    this.pending += text;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  end(text: string): void {
    this.sink.end(this.pending + text);
    this.pending = '';
  }
}

/** Streams one completion from Triton into `sink`; a failed upstream call drops the connection. */
export type Answer = (body: CompletionBody, sink: ResponseSink) => void;

/** The answering half of a floor, for the Triton named on the command line of `script`. */
export function floorAnswer(script: string): Answer {
  const probe = socketProbeVariant({ grpcUrl: tritonArgument(script), httpUrl: '' });
  const created = Math.floor(Date.now() / 1000);
  let nextId = 0;
  return (body, sink) => {
    const id = nextId++;
    const head = `data: {"id":"cmpl-${id}","object":"text_completion","created":${created},"model":${JSON.stringify(body.model)},"choices":[{"index":0,"text":`;
    const tail = ',"logprobs":null,"finish_reason":null}]}\n\n';
    const out = new Batched(sink);
    probe
      .streamText(body.prompt, body.max_tokens, id, (text) => {
        if (text.length > 0) out.send(head + JSON.stringify(text) + tail);
      })
      .then(
        () => out.end(`${head}"","logprobs":null,"finish_reason":"length"}]}\n\ndata: [DONE]\n\n`),
        () => sink.fail(),
      );
  };
}

/** The line the benchmark reads a floor's address from. */
export function announce(name: string, port: number): void {
  process.stdout.write(`${name} listening at http://127.0.0.1:${port}/v1\n`);
}
