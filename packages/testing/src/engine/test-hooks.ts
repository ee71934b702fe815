/**
 * The test hooks a generator request can carry (GENERATOR.md "Scripted output", "Guided decoding"):
 * a script from the `fake_script` parameter or the prompt's marker, else the text naming the
 * request's images (`images.ts`), else the text a JSON guide asks for. Every model reads them the
 * same way; only where the prompt comes from differs.
 */
import { TritonError } from '../errors.js';
import { jsonSchemaInstance } from '../guided.js';
import { parseFakeScript } from '../script.js';
import { imagesScript } from './images.js';
import { type Inputs, textsInput } from './inputs.js';
import type { ParameterValue } from './request.js';

export interface TestHooks {
  /** What the generator produces instead of the corpus (`GenerateOptions.script`). */
  readonly script: string | undefined;
  /** The request's guide type, as its `received` event records it. */
  readonly guide: string | undefined;
}

export const BAD_JSON_SCHEMA =
  "guided_decoding_guide must be a JSON schema for guided_decoding_guide_type 'json_schema'";

/** The `fake_script` request parameter; refused when it is not a string. */
export function scriptParameter(parameters: ReadonlyMap<string, ParameterValue>): string | undefined {
  const value = parameters.get('fake_script');
  if (value === undefined || typeof value === 'string') return value;
  throw new TritonError('INVALID_ARG', "request parameter 'fake_script' must be a string");
}

function guidedText(type: string, guide: string | undefined): string | undefined {
  if (type === 'json') return '{}';
  if (type !== 'json_schema') return undefined;
  let schema: unknown;
  try {
    schema = JSON.parse(guide ?? '');
  } catch {
    throw new TritonError('INVALID_ARG', BAD_JSON_SCHEMA);
  }
  return JSON.stringify(jsonSchemaInstance(schema));
}

/** The guide type of a request: that of its first batch item that has a non-empty one. */
export function guideOf(inputs: Inputs): string | undefined {
  return textsInput(inputs, 'guided_decoding_guide_type')?.find((t) => t !== '');
}

/** The hooks of one request (or batch item) whose prompt is `prompt`. */
export function testHooks(prompt: string, inputs: Inputs, fromParameter: string | undefined): TestHooks {
  const guide = guideOf(inputs);
  const script =
    fromParameter ??
    parseFakeScript(prompt) ??
    imagesScript(inputs) ??
    (guide === undefined ? undefined : guidedText(guide, textsInput(inputs, 'guided_decoding_guide')?.[0]));
  return { script, guide };
}

/** `script` as a `GenerateOptions` entry (absent when there is none, for exact optional types). */
export function scriptOption(hooks: TestHooks): { script?: string } {
  return hooks.script === undefined ? {} : { script: hooks.script };
}
