import { TritonLlmError } from '../errors.js';
import type { ModelFlavor } from '../request/request.js';
import type { ModelConfig, TensorSpec } from '../transport.js';

/**
 * What the client learned from a deployed model's config: its flavor, which naming generation of
 * the backend it follows, and the switches that change how it must be called.
 */
export interface ModelSchema {
  readonly model: string;
  readonly flavor: ModelFlavor;
  /**
   * The newest backend generation whose input names the model shows: `v0.8`, `v0.11`, `2025-03`, or
   * `2026` (`seed`, `min_tokens`, token-count inputs). The LLM-API flavor reports `llmapi`, Triton's
   * vLLM backend `vllm`.
   */
  readonly backendVersion: 'v0.8' | 'v0.11' | '2025-03' | '2026' | 'llmapi' | 'vllm';
  readonly decoupled: boolean;
  readonly maxBatchSize: number;
  /** The model takes the in-band `stop` input (raw and LLM-API models), so a request can be ended gracefully. */
  readonly supportsStop: boolean;
  /**
   * Every streamed response repeats all text so far: BLS with `accumulate_tokens`, and the LLM-API
   * model, whose streamed `text_output` is the whole text so far.
   */
  readonly cumulativeText: boolean;
  readonly inputs: ReadonlyMap<string, TensorSpec>;
  readonly outputs: ReadonlyMap<string, TensorSpec>;
  readonly config: ModelConfig;
}

/**
 * Reads the flavor from the inputs a model declares, so that one client works across the
 * official model repository's versions and renames.
 */
export function detectSchema(config: ModelConfig): ModelSchema {
  const inputs = new Map(config.inputs.map((t) => [t.name, t]));
  const outputs = new Map(config.outputs.map((t) => [t.name, t]));
  const flavor = detectFlavor(config, inputs);
  if (flavor === undefined) {
    throw new TritonLlmError(
      'failed_precondition',
      `model '${config.name}' is not a TensorRT-LLM model this client knows (inputs: ${[...inputs.keys()].join(', ')}); ` +
        'use TritonLlm.infer() with raw tensors for other models',
      { model: config.name },
    );
  }
  const accumulate = (config.parameters.accumulate_tokens ?? '').trim().toLowerCase();
  return {
    model: config.name,
    flavor,
    backendVersion: flavor === 'llmapi' || flavor === 'vllm' ? flavor : detectVersion(inputs),
    decoupled: config.decoupled,
    maxBatchSize: config.maxBatchSize,
    supportsStop: inputs.has('stop'),
    cumulativeText:
      flavor === 'llmapi' || (flavor === 'bls' && (accumulate === 'true' || accumulate === '1')),
    inputs,
    outputs,
    config,
  };
}

function detectFlavor(config: ModelConfig, inputs: ReadonlyMap<string, TensorSpec>): ModelFlavor | undefined {
  if (inputs.has('input_ids') && inputs.has('request_output_len')) return 'tensorrt_llm';
  // Triton's vLLM backend: every sampling option in one JSON input (its auto-completed config).
  if (inputs.has('text_input') && inputs.has('sampling_parameters')) return 'vllm';
  if (inputs.has('text_input') && [...inputs.keys()].some((n) => n.startsWith('sampling_param_')))
    return 'llmapi';
  if (inputs.has('text_input') && inputs.has('max_tokens')) {
    if (config.platform === 'ensemble') return 'ensemble';
    // The BLS model is a Python model with the ensemble's inputs; some BLS-only inputs or its
    // accumulate_tokens parameter tell it apart from an ensemble-like custom model, but both are
    // driven the same way.
    return config.backend === 'python' || 'accumulate_tokens' in config.parameters ? 'bls' : 'ensemble';
  }
  return undefined;
}

function detectVersion(inputs: ReadonlyMap<string, TensorSpec>): ModelSchema['backendVersion'] {
  if (inputs.has('seed') || inputs.has('min_tokens') || inputs.has('return_num_output_tokens')) return '2026';
  if (inputs.has('num_return_sequences') || inputs.has('exclude_input_in_output')) return '2025-03';
  if (
    inputs.has('decoder_text_input') ||
    inputs.has('decoder_input_ids') ||
    inputs.has('runtime_top_p_min')
  ) {
    return 'v0.11';
  }
  return 'v0.8';
}
