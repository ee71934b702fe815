/**
 * What happens to an inference request before a model sees it, in Triton's order: injected status
 * faults, model lookup, the front end's decoupled check, input and output validation, decoding.
 */
import { TritonError } from '../errors.js';
import type { ModelDef } from '../models/repository.js';
import type { Tensor } from '../tensor.js';
import type { EngineContext } from './context.js';
import { findModel } from './execute.js';
import type { FaultPlan } from './faults.js';
import type { InferenceRequest, ParameterValue, Protocol } from './request.js';
import { type InputHeader, validateInputs, validateOutputs } from './validate.js';

/** The model a request is for, and the faults injected into it. */
export interface Target {
  readonly model: ModelDef;
  readonly faults: FaultPlan;
}

/**
 * Spends a `statusOnce` fault, finds the model, and applies the endpoint's refusal of decoupled
 * models (unary ModelInfer, HTTP /infer) when `refuseDecoupled` gives its message.
 */
export function findTarget(
  ctx: EngineContext,
  name: string,
  version: string,
  refuseDecoupled?: string,
): Target {
  const faults = ctx.faults.admit(name);
  const model = findModel(ctx, name, version);
  if (refuseDecoupled !== undefined && model.decoupled) throw new TritonError('UNSUPPORTED', refuseDecoupled);
  return { model, faults };
}

export interface Arrival {
  readonly protocol: Protocol;
  readonly id: string;
  readonly headers: readonly InputHeader[];
  /** Decodes the inputs' data (after validation, as Triton checks sizes last). */
  readonly decode: () => ReadonlyMap<string, Tensor>;
  readonly parameters: ReadonlyMap<string, ParameterValue>;
  readonly outputs: readonly string[];
}

export function prepareRequest(target: Target, a: Arrival): InferenceRequest {
  const arrivalMs = performance.now();
  validateInputs(target.model, a.id, a.headers);
  validateOutputs(target.model, a.id, a.outputs);
  return {
    model: target.model,
    id: a.id,
    inputs: a.decode(),
    parameters: a.parameters,
    protocol: a.protocol,
    faults: target.faults,
    arrivalMs,
  };
}
