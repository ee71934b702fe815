/**
 * The generation options a request carries, read from either tensor naming (`min_tokens`/`seed`
 * since 2026, `min_length`/`random_seed` before).
 */
import type { GenerateOptions } from '../generator.js';
import { bigintInput, boolInput, type Inputs, intInput } from './inputs.js';

export function sharedOptions(inputs: Inputs): Omit<GenerateOptions, 'maxTokens' | 'stopWords' | 'badWords'> {
  const endId = intInput(inputs, 'end_id');
  const minTokens = intInput(inputs, 'min_tokens') ?? intInput(inputs, 'min_length');
  const seed = bigintInput(inputs, 'seed') ?? bigintInput(inputs, 'random_seed');
  const beamWidth = intInput(inputs, 'beam_width');
  const numReturnSequences = intInput(inputs, 'num_return_sequences');
  return {
    ...(endId !== undefined ? { endId } : {}),
    ...(minTokens !== undefined ? { minTokens } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(beamWidth !== undefined ? { beamWidth } : {}),
    ...(numReturnSequences !== undefined ? { numReturnSequences } : {}),
    returnLogProbs: boolInput(inputs, 'return_log_probs') ?? false,
  };
}

/** Whether the output starts with the prompt: the request flag, else the model's parameter. */
export function excludesInput(inputs: Inputs, parameters: Readonly<Record<string, string>>): boolean {
  return boolInput(inputs, 'exclude_input_in_output') ?? parameters.exclude_input_in_output === 'true';
}
