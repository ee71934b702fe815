import { type ModelSchema, TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import type { ChatTemplate, ChatTool } from '../chat-template.js';
import { namedCallParser, namedToolSchema, requiredCallsParser, requiredToolsSchema } from './guided.js';
import { pickToolCallParser, type ToolCallParserChoice } from './parsers.js';
import type { ToolCallParser } from './tool-call.js';

/**
 * How the model may use the tools: `auto` (it decides), `none` (it is not shown them), `required`
 * (at least one call) or one named function.
 */
export type ToolChoice = 'auto' | 'none' | 'required' | { readonly name: string };

/** How one request uses tools: what the template shows, what guides decoding, what reads the output. */
export interface ToolCallPlan {
  /** Functions given to the chat template (none when only the guide carries them). */
  readonly tools: readonly ChatTool[];
  /** Names of the offered functions: a call to any other is text, not a call. */
  readonly known: ReadonlySet<string>;
  readonly parser: ToolCallParser;
  /** The JSON-schema guide of a `required` or named choice. */
  readonly guided?: { readonly type: 'json_schema'; readonly guide: string };
}

/** What {@link planToolCalls} weighs. */
export interface ToolCallPlanInput {
  readonly tools: readonly ChatTool[];
  readonly choice: ToolChoice;
  /** Whether a `required` choice may make several calls (default true). */
  readonly parallel?: boolean;
  readonly template: ChatTemplate;
  /** The output format; `auto` (default) recognises it from the template. */
  readonly parser?: ToolCallParserChoice;
  /** The deployed model's inputs: `required` and named choices need its guided decoding. */
  readonly schema: ModelSchema;
  /** The caller's names for its options, so that a refusal names what the user wrote. */
  readonly names?: { readonly toolChoice?: string; readonly parser?: string };
}

/**
 * The outcome of {@link planToolCalls}: no tool use (no tools, or `none`), a plan, or the reason
 * the deployment cannot do what was asked: `template` when the chat template cannot show tools
 * or teaches no format a parser reads, `guided_decoding` when the model cannot constrain its
 * output to calls. Each front end reports the refusal its own way (an error, a warning).
 */
export type ToolCallPlanning =
  | { readonly type: 'off' }
  | { readonly type: 'plan'; readonly plan: ToolCallPlan }
  | {
      readonly type: 'unsupported';
      readonly needs: 'template' | 'guided_decoding';
      readonly error: TritonLlmError;
    };

const GUIDE_TYPE_INPUT = 'guided_decoding_guide_type';

/**
 * Decides how a request uses tools, the same for every front end. `auto` shows the tools through
 * the template and parses the output in the format the template teaches; `required` and a named
 * function constrain the output with the model's guided decoding (and still show the tools where
 * the template can), because a model left free may answer in text.
 */
export function planToolCalls(input: ToolCallPlanInput): ToolCallPlanning {
  const { tools, choice, template, schema } = input;
  if (tools.length === 0 || choice === 'none') return { type: 'off' };
  const names = tools.map((t) => t.name);
  const known = new Set(names);
  if (choice === 'auto') {
    if (!template.rendersTools) {
      return unsupported(
        'template',
        invalidArgument(
          'tools',
          names,
          `the chat template (${template.source}) does not render tools; use a template that does (chatml, llama3, or the model's own)`,
        ),
      );
    }
    const parser = pickToolCallParser(input.parser ?? 'auto', template.text);
    if (parser === undefined) {
      return unsupported(
        'template',
        invalidArgument(
          'tools',
          names,
          `cannot tell which tool-call format the chat template (${template.source}) teaches; set ${input.names?.parser ?? 'the tool-call parser'} to hermes or llama3_json`,
        ),
      );
    }
    return { type: 'plan', plan: { tools, known, parser } };
  }
  const field = input.names?.toolChoice ?? 'toolChoice';
  // A bad name is the caller's mistake whatever the model can do: it is reported first.
  const fn = choice === 'required' ? undefined : tools.find((t) => t.name === choice.name);
  if (choice !== 'required' && fn === undefined) {
    throw invalidArgument(field, choice.name, `must name one of the tools (${names.join(', ')})`);
  }
  // vLLM takes the guide in its sampling_parameters JSON (structured_outputs), not in an input.
  if (!schema.inputs.has(GUIDE_TYPE_INPUT) && schema.flavor !== 'vllm') {
    return unsupported(
      'guided_decoding',
      new TritonLlmError(
        'invalid_argument',
        `${field}: ${JSON.stringify(choice)} needs guided decoding, and model '${schema.model}' (${schema.flavor}) has none (no ${GUIDE_TYPE_INPUT} input)`,
        { model: schema.model },
      ),
    );
  }
  const shown = template.rendersTools ? tools : [];
  if (choice === 'required') {
    const guide = { ...requiredToolsSchema(tools), ...(input.parallel === false ? { maxItems: 1 } : {}) };
    return {
      type: 'plan',
      plan: { tools: shown, known, parser: requiredCallsParser, guided: jsonSchemaGuide(guide) },
    };
  }
  return {
    type: 'plan',
    plan: {
      tools: shown,
      known,
      parser: namedCallParser(fn!.name),
      guided: jsonSchemaGuide(namedToolSchema(fn!)),
    },
  };
}

function jsonSchemaGuide(schema: object): NonNullable<ToolCallPlan['guided']> {
  return { type: 'json_schema', guide: JSON.stringify(schema) };
}

function unsupported(needs: 'template' | 'guided_decoding', error: TritonLlmError): ToolCallPlanning {
  return { type: 'unsupported', needs, error };
}
