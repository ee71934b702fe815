import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { type Protocol, REAL_SKIPPED, type ServerKind, useServer } from './servers.js';

// Many streams at once on `tensorrt_llm`, over both protocols, some aborted early. On the real
// server this is the load under which Triton 2.51's Python stub corrupted its heap while the
// stand-in's threads called pb_utils together (test/conformance/README.md): the stub died within
// seconds and every request after it failed. Each request also gives up after 5 s of silence, so a
// dead stub fails the test rather than hanging it.
const INPUT = [259, 260];
const WORKERS = 16;
const RUN_MS = 6000;
const ABORT_EVERY = 5;

function defineBlock(kind: ServerKind): void {
  const server = useServer(kind);

  it(`${WORKERS} streams at once for ${RUN_MS / 1000} s, every ${ABORT_EVERY}th aborted early: each ends complete or cut short, none fails`, {
    timeout: 60_000,
  }, async () => {
    const s = server();
    const llms: Record<Protocol, TritonLlm> = {
      grpc: new TritonLlm({ transport: s.transport('grpc'), model: 'tensorrt_llm' }),
      http: new TritonLlm({ transport: s.transport('http'), model: 'tensorrt_llm' }),
    };
    const failures: string[] = [];
    let complete = 0;
    let cutShort = 0;
    const end = performance.now() + RUN_MS;
    const worker = async (w: number): Promise<void> => {
      const llm = w % 2 === 0 ? llms.grpc : llms.http;
      const maxTokens = 4 + (w % 8);
      const expected = [...generateTokens(INPUT, { maxTokens })[0]!.tokens];
      for (let n = 0; performance.now() < end; n++) {
        const abort = new AbortController();
        const aborted = (w + n) % ABORT_EVERY === 0;
        if (aborted) setTimeout(() => abort.abort(), n % 4);
        const tokens: number[] = [];
        try {
          const stream = llm.stream(
            { inputIds: INPUT, maxTokens },
            { signal: abort.signal, idleTimeoutMs: 5000 },
          );
          for await (const chunk of stream) if (!chunk.done) tokens.push(...chunk.tokenIds);
        } catch (err) {
          // Aborted before its stream began (while the model config was read): its own cancellation.
          if (aborted && err instanceof TritonLlmError && err.code === 'cancelled' && tokens.length === 0) {
            cutShort++;
            continue;
          }
          failures.push(err instanceof TritonLlmError ? `${err.code}: ${err.message}` : String(err));
          continue;
        }
        if (tokens.length === expected.length) complete++;
        else cutShort++;
        // A stream ends with its whole answer, or, aborted, with the start of it.
        expect(tokens).toEqual(aborted ? expected.slice(0, tokens.length) : expected);
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    console.log(
      `${kind} Triton: ${complete} streams complete, ${cutShort} cut short by their abort, ${failures.length} failed`,
    );
    expect(failures.slice(0, 5)).toEqual([]);
    expect(complete).toBeGreaterThan(WORKERS * 4);
  });
}

describe.each(['fake'] as const)('concurrent streams on the %s Triton', defineBlock);
describe.skipIf(REAL_SKIPPED).each(['real'] as const)('concurrent streams on the %s Triton', defineBlock);
