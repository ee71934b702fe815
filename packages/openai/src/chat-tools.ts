import { type GenerateRequest, invalidArgument, type TritonLlm } from '@trtllm/sdk';
import type { ChatTemplate, ChatTool } from '@trtllm/tokenizers';
import { requireGuidedDecoding } from './capabilities.js';
import { type Body, optionalBoolean, refuseNonEmpty } from './params.js';
import {
  namedCallParser,
  namedToolSchema,
  pickToolCallParser,
  requiredCallsParser,
  requiredToolsSchema,
  type ToolCallParser,
  type ToolCallParserChoice,
} from './tool-parsers/index.js';

/** How a chat request uses tools: what the template shows, what guides decoding, what reads the output. */
export interface ToolPlan {
  /** Functions given to the chat template. */
  readonly tools: readonly ChatTool[];
  readonly known: ReadonlySet<string>;
  readonly parser: ToolCallParser;
  readonly guided?: NonNullable<GenerateRequest['guidedDecoding']>;
}

// OpenAI's rule for function names.
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function toolsOf(value: unknown): ChatTool[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidArgument('tools', value, 'must be an array of tools');
  if (value.length === 0) return undefined;
  const seen = new Set<string>();
  return value.map((t: unknown, i) => {
    const field = `tools[${i}]`;
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function)) {
      throw invalidArgument(field, t, 'must be { "type": "function", "function": { "name": ... } }');
    }
    const { name, description, parameters } = t.function;
    if (typeof name !== 'string' || !NAME.test(name)) {
      throw invalidArgument(`${field}.function.name`, name, 'must be 1-64 letters, digits, _ or -');
    }
    if (seen.has(name)) throw invalidArgument(`${field}.function.name`, name, 'is offered twice');
    seen.add(name);
    if (description !== undefined && typeof description !== 'string') {
      throw invalidArgument(`${field}.function.description`, description, 'must be a string');
    }
    if (parameters !== undefined && !isObject(parameters)) {
      throw invalidArgument(`${field}.function.parameters`, parameters, 'must be a JSON Schema object');
    }
    return {
      name,
      ...(description !== undefined ? { description } : {}),
      ...(parameters !== undefined ? { parameters } : {}),
    };
  });
}

type Choice = 'none' | 'auto' | 'required' | { readonly name: string };

function choiceOf(value: unknown, tools: readonly ChatTool[] | undefined): Choice {
  if (value === undefined || value === null) return tools === undefined ? 'none' : 'auto';
  if (value === 'none') return 'none';
  if (tools === undefined) throw invalidArgument('tool_choice', value, 'needs a non-empty tools list');
  if (value === 'auto' || value === 'required') return value;
  const named = value as { type?: unknown; function?: { name?: unknown } };
  if (isObject(named) && named.type === 'function' && isObject(named.function)) {
    const name = named.function.name;
    if (typeof name === 'string' && tools.some((t) => t.name === name)) return { name };
    throw invalidArgument('tool_choice.function.name', name, 'must name one of the tools');
  }
  throw invalidArgument(
    'tool_choice',
    value,
    'must be "none", "auto", "required" or { "type": "function", "function": { "name": ... } }',
  );
}

/**
 * Reads `tools`, `tool_choice` and `parallel_tool_calls`. Undefined means a plain chat request
 * (no tools, or `tool_choice: "none"`, where the model is neither shown the tools nor parsed for
 * calls). `auto` shows the tools through the template and parses the output with the configured
 * parser; `required` and a named function constrain the output with guided decoding, which the
 * model must have.
 */
export async function toolPlan(
  body: Body,
  ctx: {
    readonly llm: TritonLlm;
    readonly template: ChatTemplate;
    readonly parserChoice: ToolCallParserChoice;
    readonly signal: AbortSignal;
  },
): Promise<ToolPlan | undefined> {
  refuseNonEmpty(body, 'functions', 'is the deprecated form of tools; send tools instead');
  refuseNonEmpty(body, 'function_call', 'is the deprecated form of tool_choice; send tool_choice instead');
  const tools = toolsOf(body.tools);
  const choice = choiceOf(body.tool_choice, tools);
  const parallel = optionalBoolean(body, 'parallel_tool_calls') ?? true;
  if (tools === undefined || choice === 'none') return undefined;
  const known = new Set(tools.map((t) => t.name));
  const { template } = ctx;
  if (choice === 'auto') {
    if (!template.rendersTools) {
      throw invalidArgument(
        'tools',
        tools.map((t) => t.name),
        `the chat template (${template.source}) does not render tools; serve a template that does (chatml, llama3, or the model's own)`,
      );
    }
    const parser = pickToolCallParser(ctx.parserChoice, template.text);
    if (parser === undefined) {
      throw invalidArgument(
        'tools',
        tools.map((t) => t.name),
        `cannot tell which tool-call format the chat template (${template.source}) teaches; start the server with --tool-call-parser hermes or llama3_json`,
      );
    }
    return { tools, known, parser };
  }
  await requireGuidedDecoding(ctx.llm, 'tool_choice', body.tool_choice, ctx.signal);
  // The guide constrains the output either way; the template still shows the tools where it can.
  const shown = template.rendersTools ? tools : [];
  if (choice === 'required') {
    const schema = { ...requiredToolsSchema(tools), ...(parallel ? {} : { maxItems: 1 }) };
    return {
      tools: shown,
      known,
      parser: requiredCallsParser,
      guided: { type: 'json_schema', guide: JSON.stringify(schema) },
    };
  }
  const fn = tools.find((t) => t.name === choice.name)!;
  return {
    tools: shown,
    known,
    parser: namedCallParser(fn.name),
    guided: { type: 'json_schema', guide: JSON.stringify(namedToolSchema(fn)) },
  };
}
