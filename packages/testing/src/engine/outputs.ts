/**
 * Output tensors shared by the generator, ensemble and BLS responses: the always-present outputs
 * that carry zeros unless asked for (logits, perf metrics), built once where they never change.
 */
import type { ModelDef } from '../models/repository.js';
import { fp32Tensor, int32Tensor, int64Tensor, type Tensor } from '../tensor.js';
import type { ItemTiming } from './generation.js';
import { boolInput, type Inputs } from './inputs.js';

const ONE = [1, 1] as const;

// Immutable, so shared by every response (and their encoded bytes cached by identity).
const ZERO_OUTPUTS: ReadonlyMap<string, Tensor> = new Map(
  [
    fp32Tensor('context_logits', [1, 1, 1], [0]),
    fp32Tensor('generation_logits', [1, 1, 1, 1], [0]),
    int32Tensor('batch_index', ONE, [0]),
    int32Tensor('kv_cache_alloc_new_blocks', ONE, [0]),
    int32Tensor('kv_cache_reused_blocks', ONE, [0]),
    int32Tensor('kv_cache_alloc_total_blocks', ONE, [0]),
    int64Tensor('arrival_time_ns', ONE, [0n]),
    int64Tensor('first_scheduled_time_ns', ONE, [0n]),
    int64Tensor('first_token_time_ns', ONE, [0n]),
    int64Tensor('last_token_time_ns', ONE, [0n]),
    fp32Tensor('acceptance_rate', ONE, [0]),
    int32Tensor('total_accepted_draft_tokens', ONE, [0]),
    int32Tensor('total_draft_tokens', ONE, [0]),
    int32Tensor('num_input_tokens', ONE, [0]),
    int32Tensor('num_output_tokens', ONE, [0]),
  ].map((t) => [t.name, Object.freeze(t)]),
);

const SEQUENCE_INDEX: readonly Tensor[] = Array.from({ length: 64 }, (_, k) =>
  Object.freeze(int32Tensor('sequence_index', ONE, [k])),
);

export function sequenceIndexTensor(k: number): Tensor {
  return SEQUENCE_INDEX[k] ?? int32Tensor('sequence_index', ONE, [k]);
}

/** What a request asked to get back besides its tokens. */
export interface ExtraOutputs {
  readonly perfMetrics: boolean;
  readonly numInputTokens: number | undefined;
  readonly numOutputTokens: number | undefined;
}

/** The optional outputs a generator item asked for, with the counts they report. */
export function extraOutputs(
  item: { readonly inputs: Inputs; readonly inputIds: readonly number[] },
  outputTokens: number,
): ExtraOutputs {
  return {
    perfMetrics: boolInput(item.inputs, 'return_perf_metrics') ?? false,
    numInputTokens: boolInput(item.inputs, 'return_num_input_tokens') ? item.inputIds.length : undefined,
    numOutputTokens: boolInput(item.inputs, 'return_num_output_tokens') ? outputTokens : undefined,
  };
}

/**
 * The declared outputs of `model` for one request (or batch item), in config order, from `values`
 * then the shared zero outputs.
 */
export function modelOutputs(
  model: ModelDef,
  values: Readonly<Record<string, Tensor>>,
  timing: ItemTiming | undefined,
  extra: ExtraOutputs,
): Tensor[] {
  const out: Tensor[] = [];
  for (const spec of model.outputs) {
    const t = values[spec.name] ?? extraOutput(spec.name, timing, extra) ?? ZERO_OUTPUTS.get(spec.name);
    if (t) out.push(t);
  }
  return out;
}

function extraOutput(name: string, timing: ItemTiming | undefined, extra: ExtraOutputs): Tensor | undefined {
  if (name === 'num_input_tokens' && extra.numInputTokens !== undefined)
    return int32Tensor(name, ONE, [extra.numInputTokens]);
  if (name === 'num_output_tokens' && extra.numOutputTokens !== undefined)
    return int32Tensor(name, ONE, [extra.numOutputTokens]);
  if (!extra.perfMetrics || !timing) return undefined;
  switch (name) {
    case 'arrival_time_ns':
    case 'first_scheduled_time_ns':
      return int64Tensor(name, ONE, [timing.arrivalNs]);
    case 'first_token_time_ns':
      return int64Tensor(name, ONE, [timing.firstTokenNs]);
    case 'last_token_time_ns':
      return int64Tensor(name, ONE, [timing.lastTokenNs]);
    default:
      return undefined;
  }
}
