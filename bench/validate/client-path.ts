/**
 * Where our extra time to first token comes from: the same `TritonLlm.stream()` requests as
 * trtllm-bench sends, timed the same way (send to the first chunk carrying a token), over the gRPC
 * transport as trtllm-bench builds it (one `ModelStreamInfer` call per request) and with
 * `multiplex: { calls: 1 }` (every request on one shared call, as perf_analyzer and tritonclient send them).
 * Same server, same levels, one after the other.
 */
import { performance } from 'node:perf_hooks';
import { driveLoad } from '@trtllm/bench';
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { type Percentiles, percentiles } from './figures.js';

export interface ClientPathRow {
  readonly transport: 'call per request' | 'multiplexed';
  readonly concurrency: number;
  readonly requests: number;
  readonly ttftMs: Percentiles;
  readonly e2eMs: Percentiles;
}

async function timed(llm: TritonLlm, prompt: string, maxTokens: number): Promise<[number, number]> {
  const sent = performance.now();
  let first: number | undefined;
  for await (const chunk of llm.stream({ prompt, maxTokens })) {
    if (first === undefined && !chunk.done && chunk.totalTokens > 0) first = performance.now();
  }
  if (first === undefined) throw new Error('a stream ended without a token');
  return [first - sent, performance.now() - sent];
}

export async function measureClientPath(options: {
  readonly grpcUrl: string;
  readonly model: string;
  readonly prompts: readonly string[];
  readonly maxTokens: number;
  readonly levels: readonly {
    readonly concurrency: number;
    readonly requests: number;
    readonly warmup: number;
  }[];
}): Promise<ClientPathRow[]> {
  const rows: ClientPathRow[] = [];
  for (const level of options.levels) {
    for (const multiplex of [false, true]) {
      const llm = new TritonLlm({
        transport: grpcTransport({ baseUrl: options.grpcUrl, multiplex: multiplex && { calls: 1 } }),
        model: options.model,
      });
      try {
        await llm.schema();
        let n = 0;
        const ttft: number[] = [];
        const e2e: number[] = [];
        const one = async (record: boolean) => {
          const [first, end] = await timed(
            llm,
            options.prompts[n++ % options.prompts.length]!,
            options.maxTokens,
          );
          if (record) {
            ttft.push(first);
            e2e.push(end);
          }
        };
        await driveLoad({ concurrency: level.concurrency, requests: level.warmup }, () => one(false));
        await driveLoad({ concurrency: level.concurrency, requests: level.requests }, () => one(true));
        rows.push({
          transport: multiplex ? 'multiplexed' : 'call per request',
          concurrency: level.concurrency,
          requests: ttft.length,
          ttftMs: percentiles(ttft),
          e2eMs: percentiles(e2e),
        });
      } finally {
        await llm.close();
      }
    }
  }
  return rows;
}
