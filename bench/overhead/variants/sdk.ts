import { pathToFileURL } from 'node:url';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type Transport, TritonLlm } from '@trtllm/sdk';
import type { Endpoints, Variant } from './variant.js';

/** The SDK's two entry points a variant needs, from this checkout or from another build of it. */
interface SdkBuild {
  readonly TritonLlm: typeof TritonLlm;
  readonly grpcTransport: typeof grpcTransport;
  readonly httpTransport: typeof httpTransport;
}

let baseline: SdkBuild | undefined;

/**
 * Loads the built core and gRPC transport of another checkout (`BENCH_BASELINE`: its root, after
 * `pnpm install && pnpm build` there), so a change is measured against the code before it in the
 * same run, on the same server, interleaved with it.
 */
export async function loadBaseline(root: string): Promise<void> {
  // BENCH_BASELINE_PART=transport keeps this checkout's client and takes only the baseline's
  // transport: the change of one package, apart from changes elsewhere.
  const transportOnly = process.env.BENCH_BASELINE_PART === 'transport';
  const core = transportOnly
    ? { TritonLlm }
    : ((await import(pathToFileURL(`${root}/packages/core/dist/index.js`).href)) as SdkBuild);
  const grpc = (await import(pathToFileURL(`${root}/packages/grpc/dist/index.js`).href)) as SdkBuild;
  // The Node entry point, as Node's resolver picks it for users (it streams on sockets).
  const http = (await import(pathToFileURL(`${root}/packages/http/dist/node.js`).href)) as SdkBuild;
  baseline = {
    TritonLlm: core.TritonLlm,
    grpcTransport: grpc.grpcTransport,
    httpTransport: http.httpTransport,
  };
}

/** `TritonLlm` over gRPC or HTTP from the build `loadBaseline` loaded. */
export function sdkBaselineVariant(
  protocol: 'grpc' | 'http',
  endpoints: Endpoints,
  grpcOptions: { readonly multiplex?: boolean; readonly replicas?: 2 } = {},
): Variant {
  if (baseline === undefined) throw new Error('BENCH_BASELINE is not loaded');
  const { replicas, ...options } = grpcOptions;
  const transport =
    protocol === 'grpc'
      ? replicas === 2
        ? baseline.grpcTransport({ baseUrls: [endpoints.grpcUrl, otherName(endpoints.grpcUrl)] })
        : baseline.grpcTransport({ baseUrl: endpoints.grpcUrl, ...options })
      : baseline.httpTransport({ baseUrl: endpoints.httpUrl });
  return streamingVariant(new baseline.TritonLlm({ transport, model: 'ensemble' }));
}

/** `TritonLlm` as a user would call it: `stream()`, text joined from the chunks, usage from the final chunk. */
export function sdkVariant(
  protocol: 'grpc' | 'http',
  endpoints: Endpoints,
  grpcOptions: { readonly multiplex?: boolean; readonly replicas?: 1 | 2 } = {},
): Variant {
  // BENCH_GRPC_MAX_CONNECTIONS: connections past a server's stream limit (see BENCH_FAKE_MAX_STREAMS).
  const maxConnections = process.env.BENCH_GRPC_MAX_CONNECTIONS;
  const { replicas, ...options } = grpcOptions;
  const connections = maxConnections !== undefined ? { maxConnections: Number(maxConnections) } : {};
  // `replicas: 2`: the same server under two names (127.0.0.1 and localhost), balanced as two
  // endpoints (two connections). `replicas: 1`: the replica transport over the one address, so
  // that its own per-token path is all that differs from `sdk-grpc`.
  const addresses = replicas === 2 ? [endpoints.grpcUrl, otherName(endpoints.grpcUrl)] : [endpoints.grpcUrl];
  const transport: Transport =
    protocol === 'grpc'
      ? replicas !== undefined
        ? grpcTransport({ baseUrls: addresses, ...connections })
        : grpcTransport({ baseUrl: endpoints.grpcUrl, ...options, ...connections })
      : httpTransport({ baseUrl: endpoints.httpUrl });
  return streamingVariant(new TritonLlm({ transport, model: 'ensemble' }));
}

/**
 * Two transports to the same address, two `TritonLlm`s, no replica transport: each request goes to
 * the one with fewer requests in flight (ties in turn), as the replica transport picks. Whether
 * balanced streams' extra CPU is the replica layer's, the second connection's (one transport past
 * a stream limit opens one too) or a second transport's.
 *
 * Not strict turns: on the fake's batch clock, a wave of requests that all start together, sent
 * half on each connection, reaches the fake on two sides of a step and splits in two; split after
 * split, the requests come to start one at a time, and each then leaves in a write of its own
 * (measured: 3,668 flushes of the connections' writes for 3,000 requests, against 105 on one
 * connection and 240 when the least loaded is picked), a heavier workload rather than a costlier path.
 */
export function twoTransportsVariant(endpoints: Endpoints): Variant {
  const a = countedLeg(endpoints.grpcUrl);
  const b = countedLeg(otherName(endpoints.grpcUrl));
  let turn = 0;
  return {
    async stream(prompt, maxTokens, id, onFirstToken) {
      turn ^= 1;
      const leg = a.inFlight !== b.inFlight ? (a.inFlight < b.inFlight ? a : b) : turn === 0 ? a : b;
      leg.inFlight += 1;
      try {
        return await leg.variant.stream(prompt, maxTokens, id, onFirstToken);
      } finally {
        leg.inFlight -= 1;
      }
    },
    close: async () => {
      await Promise.all([a.variant.close(), b.variant.close()]);
    },
  };
}

/** A client on a transport of its own, with its requests in flight. */
function countedLeg(baseUrl: string): { variant: Variant; inFlight: number } {
  const llm = new TritonLlm({ transport: grpcTransport({ baseUrl }), model: 'ensemble' });
  return { variant: streamingVariant(llm), inFlight: 0 };
}

/** The same address under its other loopback name. */
function otherName(url: string): string {
  const u = new URL(url);
  u.hostname = u.hostname === 'localhost' ? '127.0.0.1' : 'localhost';
  return u.toString().replace(/\/$/, '');
}

function streamingVariant(llm: TritonLlm): Variant {
  return {
    async stream(prompt, maxTokens, _id, onFirstToken) {
      let text = '';
      let first = true;
      let tokens = 0;
      for await (const chunk of llm.stream({ prompt, maxTokens })) {
        if (chunk.done) {
          tokens = chunk.usage.completionTokens ?? 0;
          continue;
        }
        if (first) {
          first = false;
          onFirstToken?.();
        }
        text += chunk.text;
      }
      if (text.length === 0 && tokens > 0) throw new Error('tokens counted but no text received');
      return tokens;
    },
    close: () => llm.close(),
  };
}
