/** The engine's entry: find the model, run the request on the right model kind, track it. */
import { asTritonError, statisticsUnavailable, unknownModel, unloadedModel } from '../errors.js';
import { MODEL_VERSION, type ModelDef } from '../models/repository.js';
import { batchNeedsNonDecoupled, batchSize } from './batch.js';
import type { EngineContext } from './context.js';
import { executeEcho } from './echo-model.js';
import { refuse } from './finish.js';
import { executeGenerator } from './generator-model.js';
import { executeLlmApi } from './llmapi-model.js';
import type { InferenceRequest, ResponseSink } from './request.js';
import { executeTextModel } from './text-model.js';
import { executeTokenizerModel } from './tokenizer-models.js';
import { executeVllm } from './vllm-model.js';

/**
 * The model `name` at `version` ('' = latest) when the fake serves it, else undefined: the one
 * answer behind readiness, metadata, config, statistics and inference, which differ only in the
 * error each gives for a model it does not serve.
 */
export function servedModel(ctx: EngineContext, name: string, version = ''): ModelDef | undefined {
  const model = ctx.models.get(name);
  return model !== undefined && (version === '' || version === MODEL_VERSION) ? model : undefined;
}

/** The model `name` at `version` ('' = latest), or Triton's unknown-model error. */
export function findModel(ctx: EngineContext, name: string, version = ''): ModelDef {
  const model = servedModel(ctx, name, version);
  if (model !== undefined) return model;
  throw version === '' && ctx.control.wasUnloaded(name) ? unloadedModel(name) : unknownModel(name, version);
}

/** The model whose statistics are asked for: Triton refuses an unknown one with an error of its own. */
export function statisticsModel(ctx: EngineContext, name: string, version = ''): ModelDef {
  const model = servedModel(ctx, name, version);
  // Triton names the version only when the model exists and that version does not.
  if (model === undefined) throw statisticsUnavailable(name, ctx.models.has(name) ? version : '');
  return model;
}

function run(req: InferenceRequest, sink: ResponseSink, ctx: EngineContext): Promise<void> {
  // A decoupled model answers each request on a response stream of its own: one item per request.
  const n = req.model.maxBatchSize > 0 ? batchSize(req.inputs) : 1;
  if (n > 1 && req.model.decoupled) {
    refuse(req, sink, ctx, batchNeedsNonDecoupled(n));
    return Promise.resolve();
  }
  switch (req.model.kind) {
    case 'generator':
      return executeGenerator(req, sink, ctx);
    case 'ensemble':
    case 'bls':
      return executeTextModel(req, sink, ctx);
    case 'llmapi':
      return executeLlmApi(req, sink, ctx);
    case 'vllm':
      return executeVllm(req, sink, ctx);
    case 'preprocessing':
    case 'postprocessing':
      return executeTokenizerModel(req, sink, ctx);
    case 'echo':
      return executeEcho(req, sink, ctx);
  }
}

/** Keeps only the outputs a request named (all when it named none), in the model's order. */
function onlyRequested(sink: ResponseSink, names: readonly string[]): ResponseSink {
  if (names.length === 0) return sink;
  const wanted = new Set(names);
  return {
    signal: sink.signal,
    send: (r) => sink.send({ ...r, outputs: r.outputs.filter((o) => wanted.has(o.name)) }),
    complete: () => sink.complete(),
    fail: (e) => sink.fail(e),
  };
}

/** Counts the request's outcome in the model's statistics. */
function counted(sink: ResponseSink, model: string, ctx: EngineContext): ResponseSink {
  const started = Date.now();
  return {
    signal: sink.signal,
    send: (r) => sink.send(r),
    complete: () => {
      ctx.statistics.record(model, true, started);
      sink.complete();
    },
    fail: (e) => {
      ctx.statistics.record(model, false, started);
      sink.fail(e);
    },
  };
}

/**
 * Starts a validated request. Its responses and end go to `sink`; the returned promise settles when
 * all its work is done (an ensemble's generator may outlive the client's call).
 */
export function execute(
  req: InferenceRequest,
  sink: ResponseSink,
  ctx: EngineContext,
  requestedOutputs: readonly string[],
): Promise<void> {
  const target = counted(onlyRequested(sink, requestedOutputs), req.model.name, ctx);
  const work = run(req, target, ctx).catch((err: unknown) => target.fail(asTritonError(err)));
  ctx.activity.track(work);
  return work;
}
