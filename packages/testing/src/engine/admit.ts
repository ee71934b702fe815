/**
 * What happens to an inference request before a model sees it, in Triton's order: injected status
 * faults, model lookup, the front end's decoupled check, input and output validation, decoding.
 */
import { TritonError } from '../errors.js';
import type { ModelDef } from '../models/repository.js';
import type { Tensor } from '../tensor.js';
import type { EngineContext } from './context.js';
import { findModel } from './execute.js';
import type { InferenceRequest, ParameterValue, Protocol } from './request.js';
import { type InputHeader, validateInputs, validateOutputs } from './validate.js';

export interface Arrival {
  readonly protocol: Protocol;
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id: string;
  readonly headers: readonly InputHeader[];
  /** Decodes the inputs' data (after validation, as Triton checks sizes last). */
  readonly decode: (model: ModelDef) => Map<string, Tensor>;
  readonly parameters: ReadonlyMap<string, ParameterValue>;
  readonly outputs: readonly string[];
  /** The message when this endpoint refuses decoupled models (unary ModelInfer, HTTP /infer). */
  readonly refuseDecoupled?: string;
}

export function admit(ctx: EngineContext, a: Arrival): InferenceRequest {
  const faults = ctx.faults.admit(a.modelName);
  const model = findModel(ctx, a.modelName, a.modelVersion);
  if (a.refuseDecoupled !== undefined && model.decoupled) throw new TritonError('UNSUPPORTED', a.refuseDecoupled);
  validateInputs(model, a.id, a.headers);
  validateOutputs(model, a.id, a.outputs);
  return {
    model,
    id: a.id,
    inputs: a.decode(model),
    parameters: a.parameters,
    protocol: a.protocol,
    faults,
  };
}
