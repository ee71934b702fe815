import type { MessageInitShape } from '@bufbuild/protobuf';
import { TritonLlmError } from '@trtllm/sdk';
import type { Parameters, ParameterValue } from '@trtllm/sdk/transport';
import type { InferParameter, InferParameterSchema } from '../gen/inference/grpc_service_pb.js';

type ParameterInit = MessageInitShape<typeof InferParameterSchema>;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/**
 * Core parameters to gRPC `InferParameter`s. Whole numbers travel as `int64_param` (Triton reads
 * counts and ids as integers), other numbers as `double_param`, and bigints beyond int64 as
 * `uint64_param`.
 */
export function toInferParameters(parameters: Parameters | undefined): Record<string, ParameterInit> {
  // fromEntries, not assignment: a parameter named `__proto__` must stay a parameter.
  return Object.fromEntries(
    Object.entries(parameters ?? {}).map(([name, value]) => [
      name,
      { parameterChoice: toChoice(name, value) },
    ]),
  );
}

function toChoice(name: string, value: ParameterValue): NonNullable<ParameterInit['parameterChoice']> {
  switch (typeof value) {
    case 'boolean':
      return { case: 'boolParam', value };
    case 'string':
      return { case: 'stringParam', value };
    case 'number':
      return Number.isSafeInteger(value)
        ? { case: 'int64Param', value: BigInt(value) }
        : { case: 'doubleParam', value };
    case 'bigint':
      return { case: bigintField(name, value), value };
    default:
      throw parameterTypeError(name, value);
  }
}

/** The field a bigint parameter travels in: `int64_param`, or `uint64_param` beyond int64. */
export function bigintField(name: string, value: bigint): 'int64Param' | 'uint64Param' {
  if (value >= INT64_MIN && value <= INT64_MAX) return 'int64Param';
  if (value > INT64_MAX && value <= UINT64_MAX) return 'uint64Param';
  throw new TritonLlmError(
    'invalid_argument',
    `parameters.${name}: ${value}n does not fit a 64-bit integer parameter`,
  );
}

/** The error for a parameter value of a type no `InferParameter` holds. */
export function parameterTypeError(name: string, value: unknown): TritonLlmError {
  return new TritonLlmError(
    'invalid_argument',
    `parameters.${name}: a parameter must be a boolean, number, bigint or string (got ${typeof value})`,
  );
}

/** gRPC `InferParameter`s to core parameters; 64-bit integers become numbers when they fit exactly. */
export function fromInferParameters(parameters: Readonly<Record<string, InferParameter>>): Parameters {
  const out: [string, ParameterValue][] = [];
  for (const [name, p] of Object.entries(parameters)) {
    const choice = p.parameterChoice;
    // A parameter with no value set has nothing to report.
    if (choice.case === undefined) continue;
    out.push([
      name,
      choice.case === 'int64Param' || choice.case === 'uint64Param' ? narrow(choice.value) : choice.value,
    ]);
  }
  return Object.fromEntries(out);
}

function narrow(value: bigint): number | bigint {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value;
}
