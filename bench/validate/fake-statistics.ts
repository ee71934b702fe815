/**
 * Stopgap so that perf_analyzer (and genai-perf, which runs it) can measure the fake Triton.
 *
 * perf_analyzer reads `ModelStatistics` of every model around each measurement and stops with
 * "failed to find the requested model version" unless (1) the `queue` count of the model it measures
 * AND of each composing model of an ensemble grew during the measurement (that is how it picks the
 * model version when none is given), and (2) compute input, infer and output counts are equal. The
 * fake (packages/testing, `models/describe.ts` `modelStatistics`) reports `queue` as zero, counts only
 * `compute_infer`, and counts nothing for the composing models of an ensemble call. Real Triton
 * 2.51 reports all three per request.
 *
 * This module, imported before the fake starts, wraps the `ModelStatistics` handler the fake gives
 * to `@grpc/grpc-js` and fills in what is missing from the counts the fake does keep: the queue and
 * compute counts follow the successful requests, and each ensemble request also counts once for each
 * of its composing models. Times stay as the fake reports them. It changes no other RPC, so nothing
 * measured is affected; it becomes a no-op once the fake reports these counts itself.
 */
import grpc from '@grpc/grpc-js';

type Duration = { count?: number | string; ns?: number | string };
interface InferStats {
  success?: Duration;
  fail?: Duration;
  queue?: Duration;
  compute_input?: Duration;
  compute_infer?: Duration;
  compute_output?: Duration;
  [key: string]: Duration | undefined;
}
interface ModelStats {
  name: string;
  inference_stats?: InferStats;
  [key: string]: unknown;
}
interface StatsResponse {
  model_stats?: ModelStats[];
}

/** The composing models of the fake's ensembles (packages/testing/GENERATOR.md, model repository). */
const COMPOSING: Readonly<Record<string, readonly string[]>> = {
  ensemble: ['preprocessing', 'tensorrt_llm', 'postprocessing'],
  ensemble_unary: ['preprocessing', 'tensorrt_llm_unary', 'postprocessing'],
};

const count = (d: Duration | undefined) => Number(d?.count ?? 0);

function completed(response: StatsResponse): StatsResponse {
  const stats = response.model_stats ?? [];
  const own = new Map(stats.map((m) => [m.name, count(m.inference_stats?.success)]));
  const extra = new Map<string, number>();
  for (const [ensemble, parts] of Object.entries(COMPOSING)) {
    for (const part of parts) extra.set(part, (extra.get(part) ?? 0) + (own.get(ensemble) ?? 0));
  }
  return {
    ...response,
    model_stats: stats.map((m) => {
      const s = m.inference_stats ?? {};
      const requests = (own.get(m.name) ?? 0) + (extra.get(m.name) ?? 0);
      // Only fill in what the fake leaves lower than the requests it served.
      const atLeast = (d: Duration | undefined): Duration =>
        count(d) >= requests ? (d ?? {}) : { count: requests, ns: Number(d?.ns ?? 0) };
      return {
        ...m,
        inference_stats: {
          ...s,
          success: atLeast(s.success),
          queue: atLeast(s.queue),
          compute_input: atLeast(s.compute_input),
          compute_infer: atLeast(s.compute_infer),
          compute_output: atLeast(s.compute_output),
        },
      };
    }),
  };
}

type Callback = (err: unknown, value?: unknown, ...rest: unknown[]) => void;
type Handler = (call: unknown, callback: Callback) => void;

const original = grpc.Server.prototype.addService;
grpc.Server.prototype.addService = function addService(service, implementation) {
  const stats = (implementation as Record<string, unknown>).ModelStatistics as Handler | undefined;
  if (stats === undefined) return original.call(this, service, implementation);
  const wrapped: Handler = (call, callback) =>
    stats(call, (err, value, ...rest) =>
      callback(err, err ? value : completed(value as StatsResponse), ...rest),
    );
  return original.call(this, service, {
    ...implementation,
    ModelStatistics: wrapped as unknown as grpc.UntypedHandleCall,
  });
};
