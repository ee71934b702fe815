/**
 * Triton core's checks of a request against the model config, with its messages: input count and
 * missing inputs, unknown inputs, batch sizes, data types, shapes.
 */
import { requestPrefix, TritonError } from '../errors.js';
import type { ModelDef } from '../models/repository.js';

/** What a front end knows of an input before decoding its data. */
export interface InputHeader {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
}

const list = (names: readonly string[]) => `[${names.map((n) => `'${n}'`).join(',')}]`;
const dims = (d: readonly number[]) => `[${d.join(',')}]`;

export function validateInputs(model: ModelDef, id: string, inputs: readonly InputHeader[]): void {
  const prefix = requestPrefix(id);
  const seen = new Set<string>();
  for (const input of inputs) {
    if (seen.has(input.name)) {
      throw new TritonError('INVALID_ARG', `${prefix}input '${input.name}' is specified more than once`);
    }
    seen.add(input.name);
  }
  const required = model.inputs.filter((s) => !s.optional);
  const missing = required.filter((s) => !seen.has(s.name)).map((s) => s.name);
  if (inputs.length > model.inputs.length || inputs.length < required.length || missing.length > 0) {
    const expected =
      required.length === model.inputs.length
        ? `expected ${model.inputs.length} inputs`
        : `expected number of inputs between ${required.length} and ${model.inputs.length}`;
    throw new TritonError(
      'INVALID_ARG',
      `${prefix}${expected} but got ${inputs.length} inputs for model '${model.name}'. Got input(s) ${list(
        inputs.map((i) => i.name),
      )}, but missing required input(s) ${list(missing)}. Please provide all required input(s).`,
    );
  }
  validateBatch(model, prefix, inputs);
  for (const input of inputs) {
    const spec = model.inputs.find((s) => s.name === input.name);
    if (!spec) continue;
    if (input.datatype !== spec.datatype) {
      throw new TritonError(
        'INVALID_ARG',
        `${prefix}inference input '${input.name}' data-type is '${input.datatype}', but model '${model.name}' expects '${spec.datatype}'`,
      );
    }
    // A model with max_batch_size 0 has no batch dimension: its inputs are shaped as declared.
    const batched = model.maxBatchSize > 0;
    const batch = batched ? input.shape[0] : 1;
    const expected = batched ? [-1, ...spec.dims] : spec.dims;
    const offset = batched ? 1 : 0;
    const fits =
      input.shape.length === expected.length &&
      spec.dims.every((d, i) => d === -1 || d === input.shape[i + offset]) &&
      input.shape.every((d) => d >= 0);
    if (!fits || batch === undefined || batch < 1) {
      throw new TritonError(
        'INVALID_ARG',
        `${prefix}unexpected shape for input '${input.name}' for model '${model.name}'. Expected ${dims(expected)}, got ${dims(input.shape)}`,
      );
    }
  }
}

/**
 * Triton core's batch pass, before any data type or shape check: every input must be known and
 * share the leading (batch) dimension, which must not exceed `max_batch_size`.
 */
function validateBatch(model: ModelDef, prefix: string, inputs: readonly InputHeader[]): void {
  let batch: number | undefined;
  for (const input of inputs) {
    if (!model.inputs.some((s) => s.name === input.name)) {
      throw new TritonError(
        'INVALID_ARG',
        `${prefix}unexpected inference input '${input.name}' for model '${model.name}'`,
      );
    }
    // A shape without a batch dimension is reported by the shape check.
    const own = model.maxBatchSize > 0 ? input.shape[0] : undefined;
    if (own === undefined) continue;
    if (batch === undefined) batch = own;
    else if (own !== batch) {
      throw new TritonError(
        'INVALID_ARG',
        `${prefix}input '${input.name}' batch size does not match other inputs for '${model.name}'`,
      );
    }
  }
  if (batch !== undefined && batch > model.maxBatchSize) {
    throw new TritonError(
      'INVALID_ARG',
      `${prefix}inference request batch-size must be <= ${model.maxBatchSize} for '${model.name}'`,
    );
  }
}

/** Requested outputs must exist (Triton: "unexpected inference output"). */
export function validateOutputs(model: ModelDef, id: string, names: readonly string[]): void {
  for (const name of names) {
    if (!model.outputs.some((o) => o.name === name)) {
      throw new TritonError(
        'INVALID_ARG',
        `${requestPrefix(id)}unexpected inference output '${name}' for model '${model.name}'`,
      );
    }
  }
}
