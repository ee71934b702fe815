/**
 * The model repository of GENERATOR.md: which models exist, what they declare, and which of them are
 * decoupled, for the backend version and overrides a fake was started with.
 */
import {
  BLS_INPUTS,
  DISAGGREGATED_INPUTS,
  DISAGGREGATED_OUTPUTS,
  ENSEMBLE_INPUTS,
  LLMAPI_INPUTS,
  LLMAPI_OUTPUTS,
  MULTIMODAL_INPUTS,
  MULTIMODAL_OUTPUTS,
  POSTPROCESSING_INPUTS,
  POSTPROCESSING_OUTPUTS,
  PREPROCESSING_INPUTS,
  PREPROCESSING_OUTPUTS,
  TEXT_MODEL_OUTPUTS,
  TRTLLM_INPUTS,
  TRTLLM_OUTPUTS,
  VLLM_INPUTS,
  VLLM_OUTPUTS,
} from './tables.js';
import { type BackendVersion, type TensorSpec, tensorsFor } from './tensor-spec.js';

/** How a model behaves: which engine runs it. */
export type ModelKind =
  | 'preprocessing'
  | 'postprocessing'
  | 'generator'
  | 'ensemble'
  | 'bls'
  | 'llmapi'
  | 'vllm'
  | 'echo';

export interface EnsembleStep {
  readonly model_name: string;
  readonly model_version: number;
  readonly input_map: Readonly<Record<string, string>>;
  readonly output_map: Readonly<Record<string, string>>;
}

/** One model of the repository, with its config. */
export interface ModelDef {
  readonly name: string;
  readonly kind: ModelKind;
  readonly decoupled: boolean;
  /** `ensemble` for the ensemble, else empty (backend models). */
  readonly platform: string;
  readonly backend: string;
  readonly maxBatchSize: number;
  readonly inputs: readonly TensorSpec[];
  readonly outputs: readonly TensorSpec[];
  readonly parameters: Readonly<Record<string, string>>;
  /** The generator model an ensemble or BLS model runs. */
  readonly generator: string | undefined;
  /** BLS: every streamed response carries all text so far. */
  readonly accumulateTokens: boolean;
  /**
   * The id of the inner generator request: the client's (ensemble, our BLS), or a fresh uuid, as
   * the official BLS does (then its failures are answered INTERNAL, with their text).
   */
  readonly innerRequestId: 'outer' | 'fresh';
  readonly ensembleSteps: readonly EnsembleStep[] | undefined;
}

export interface RepositoryOptions {
  readonly backendVersion: BackendVersion;
  readonly decoupled: Partial<Record<string, boolean>>;
  readonly accumulateTokens: boolean;
  readonly ttftMs: number;
  readonly itlMs: number;
}

/** The only version every model has. */
export const MODEL_VERSION = '1';
const MAX_BATCH_SIZE = 64;

type Draft = Omit<ModelDef, 'decoupled' | 'parameters'> & {
  readonly defaultDecoupled: boolean;
  readonly parameters: Record<string, string>;
};

function draft(
  name: string,
  kind: ModelKind,
  defaultDecoupled: boolean,
  parts: Partial<Omit<Draft, 'name' | 'kind' | 'defaultDecoupled'>> & Pick<Draft, 'inputs' | 'outputs'>,
): Draft {
  return {
    name,
    kind,
    defaultDecoupled,
    platform: '',
    backend: 'python',
    maxBatchSize: MAX_BATCH_SIZE,
    parameters: {},
    generator: undefined,
    accumulateTokens: false,
    innerRequestId: 'outer',
    ensembleSteps: undefined,
    ...parts,
  };
}

function ensembleSteps(generator: string): EnsembleStep[] {
  return [
    {
      model_name: 'preprocessing',
      model_version: -1,
      input_map: {
        QUERY: 'text_input',
        REQUEST_OUTPUT_LEN: 'max_tokens',
        BAD_WORDS_DICT: 'bad_words',
        STOP_WORDS_DICT: 'stop_words',
        END_ID: 'end_id',
        PAD_ID: 'pad_id',
      },
      output_map: {
        INPUT_ID: '_INPUT_ID',
        REQUEST_INPUT_LEN: '_REQUEST_INPUT_LEN',
        BAD_WORDS_IDS: '_BAD_WORDS_IDS',
        STOP_WORDS_IDS: '_STOP_WORDS_IDS',
        REQUEST_OUTPUT_LEN: '_REQUEST_OUTPUT_LEN',
        OUT_END_ID: '_PREPROCESSOR_END_ID',
        OUT_PAD_ID: '_PREPROCESSOR_PAD_ID',
      },
    },
    {
      model_name: generator,
      model_version: -1,
      input_map: {
        input_ids: '_INPUT_ID',
        input_lengths: '_REQUEST_INPUT_LEN',
        request_output_len: '_REQUEST_OUTPUT_LEN',
        end_id: '_PREPROCESSOR_END_ID',
        pad_id: '_PREPROCESSOR_PAD_ID',
        stop_words_list: '_STOP_WORDS_IDS',
        bad_words_list: '_BAD_WORDS_IDS',
        streaming: 'stream',
        beam_width: 'beam_width',
        return_log_probs: 'return_log_probs',
      },
      output_map: {
        output_ids: '_TOKENS_BATCH',
        sequence_length: '_SEQUENCE_LENGTH',
        cum_log_probs: 'cum_log_probs',
        output_log_probs: 'output_log_probs',
      },
    },
    {
      model_name: 'postprocessing',
      model_version: -1,
      input_map: { TOKENS_BATCH: '_TOKENS_BATCH', SEQUENCE_LENGTH: '_SEQUENCE_LENGTH' },
      output_map: { OUTPUT: 'text_output' },
    },
  ];
}

function drafts(options: RepositoryOptions): Draft[] {
  const v = options.backendVersion;
  const timing = { ttft_ms: String(options.ttftMs), itl_ms: String(options.itlMs) };
  const generatorParams = {
    gpt_model_type: 'inflight_fused_batching',
    max_beam_width: '4',
    exclude_input_in_output: 'false',
    cancellation_check_period_ms: '100',
    ...timing,
  };
  const generator = (name: string, decoupled: boolean) =>
    draft(name, 'generator', decoupled, {
      backend: 'tensorrtllm',
      inputs: tensorsFor(TRTLLM_INPUTS, v),
      // context_phase_params is only produced for disaggregated serving, which the fake does not do.
      outputs: tensorsFor(TRTLLM_OUTPUTS, v),
      parameters: { ...generatorParams },
    });
  const ensemble = (name: string, inner: string, decoupled: boolean) =>
    draft(name, 'ensemble', decoupled, {
      platform: 'ensemble',
      backend: '',
      inputs: tensorsFor(ENSEMBLE_INPUTS, v),
      outputs: tensorsFor(TEXT_MODEL_OUTPUTS, v),
      generator: inner,
      ensembleSteps: ensembleSteps(inner),
    });
  const bls = (name: string, accumulate: boolean, innerRequestId: 'outer' | 'fresh' = 'outer') =>
    draft(name, 'bls', true, {
      innerRequestId,
      inputs: tensorsFor(BLS_INPUTS, v),
      outputs: tensorsFor(TEXT_MODEL_OUTPUTS, v),
      generator: 'tensorrt_llm',
      accumulateTokens: accumulate,
      parameters: { accumulate_tokens: String(accumulate), tensorrt_llm_model_name: 'tensorrt_llm' },
    });
  return [
    draft('preprocessing', 'preprocessing', false, {
      inputs: tensorsFor(PREPROCESSING_INPUTS, v),
      outputs: tensorsFor(PREPROCESSING_OUTPUTS, v),
      parameters: { tokenizer_dir: 'fake-bytes-v1', add_special_tokens: 'false' },
    }),
    draft('postprocessing', 'postprocessing', false, {
      inputs: tensorsFor(POSTPROCESSING_INPUTS, v),
      outputs: tensorsFor(POSTPROCESSING_OUTPUTS, v),
      parameters: { tokenizer_dir: 'fake-bytes-v1', skip_special_tokens: 'true' },
    }),
    generator('tensorrt_llm', true),
    generator('tensorrt_llm_unary', false),
    ensemble('ensemble', 'tensorrt_llm', true),
    ensemble('ensemble_unary', 'tensorrt_llm_unary', false),
    bls('tensorrt_llm_bls', options.accumulateTokens),
    bls('tensorrt_llm_bls_per_token', false),
    // Shaped like the official BLS: a fresh inner request id, every response decoded, a flags-only final.
    bls('tensorrt_llm_bls_official', true, 'fresh'),
    // The multimodal ensemble of the newest repository; older backends had another shape.
    ...(v === 'latest'
      ? [
          draft('multimodal', 'ensemble', true, {
            platform: 'ensemble',
            backend: '',
            inputs: tensorsFor(MULTIMODAL_INPUTS, v),
            outputs: tensorsFor(MULTIMODAL_OUTPUTS, v),
            generator: 'tensorrt_llm',
            ensembleSteps: ensembleSteps('tensorrt_llm'),
          }),
          // Driven like the raw model: the fake generates itself instead of calling a context and a
          // generation model.
          draft('disaggregated_serving_bls', 'generator', true, {
            inputs: tensorsFor(DISAGGREGATED_INPUTS, v),
            outputs: tensorsFor(DISAGGREGATED_OUTPUTS, v),
            parameters: {
              ...generatorParams,
              context_model_name: 'tensorrt_llm',
              generation_model_name: 'tensorrt_llm',
            },
          }),
        ]
      : []),
    draft('llmapi', 'llmapi', true, {
      inputs: tensorsFor(LLMAPI_INPUTS, 'latest'),
      outputs: tensorsFor(LLMAPI_OUTPUTS, 'latest'),
      parameters: { ...timing },
    }),
    // Triton's vLLM backend, as its auto-completed config reads: decoupled, no batch dimension.
    draft('vllm', 'vllm', true, {
      maxBatchSize: 0,
      inputs: tensorsFor(VLLM_INPUTS, 'latest'),
      outputs: tensorsFor(VLLM_OUTPUTS, 'latest'),
      parameters: { ...timing },
    }),
    // No flavor the SDK knows: streamed by its tensors (TritonLlm.streamInfer), one response per INPUT0 element.
    draft('echo', 'echo', true, {
      inputs: [{ name: 'INPUT0', datatype: 'INT32', dims: [-1], optional: false, reshapeToScalar: false }],
      outputs: [{ name: 'OUTPUT0', datatype: 'INT32', dims: [1], optional: false, reshapeToScalar: false }],
      parameters: { ...timing },
    }),
  ];
}

/** Every model, by name, after the per-model `decoupled` overrides. */
export function buildRepository(options: RepositoryOptions): ReadonlyMap<string, ModelDef> {
  const all = drafts(options);
  const decoupledOf = new Map<string, boolean>();
  for (const d of all) {
    if (d.kind !== 'ensemble') decoupledOf.set(d.name, options.decoupled[d.name] ?? d.defaultDecoupled);
  }
  const models = new Map<string, ModelDef>();
  for (const { defaultDecoupled: _, ...d } of all) {
    // An ensemble is decoupled exactly when its generator is, unless overridden itself.
    const decoupled =
      d.kind === 'ensemble'
        ? (options.decoupled[d.name] ?? decoupledOf.get(d.generator ?? '') ?? false)
        : (decoupledOf.get(d.name) ?? false);
    const parameters =
      d.kind === 'generator' || d.kind === 'bls'
        ? { ...d.parameters, decoupled_mode: String(decoupled) }
        : d.parameters;
    models.set(d.name, { ...d, decoupled, parameters });
  }
  return models;
}
