import type { TritonLlm } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import {
  type ChatTemplate,
  type ChatTool,
  planToolCalls,
  type ToolCallParserChoice,
  type ToolCallPlan,
  type ToolChoice,
} from '@trtllm/tokenizers';
import { type Body, optionalBoolean, refuseNonEmpty } from './params.js';

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

function choiceOf(value: unknown, tools: readonly ChatTool[] | undefined): ToolChoice {
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
 * Reads `tools`, `tool_choice` and `parallel_tool_calls` and plans the request's tool use (the
 * plan every front end shares). Undefined means a plain chat request (no tools, or
 * `tool_choice: "none"`, where the model is neither shown the tools nor parsed for calls); a
 * deployment that cannot do what was asked is refused with a 400.
 */
export async function toolPlan(
  body: Body,
  ctx: {
    readonly llm: TritonLlm;
    readonly template: ChatTemplate;
    readonly parserChoice: ToolCallParserChoice;
    readonly signal: AbortSignal;
  },
): Promise<ToolCallPlan | undefined> {
  refuseNonEmpty(body, 'functions', 'is the deprecated form of tools; send tools instead');
  refuseNonEmpty(body, 'function_call', 'is the deprecated form of tool_choice; send tool_choice instead');
  const tools = toolsOf(body.tools);
  const choice = choiceOf(body.tool_choice, tools);
  const parallel = optionalBoolean(body, 'parallel_tool_calls') ?? true;
  if (tools === undefined || choice === 'none') return undefined;
  const planning = planToolCalls({
    tools,
    choice,
    parallel,
    template: ctx.template,
    parser: ctx.parserChoice,
    schema: await ctx.llm.schema({ signal: ctx.signal }),
    names: { toolChoice: 'tool_choice', parser: '--tool-call-parser' },
  });
  if (planning.type === 'unsupported') throw planning.error;
  return planning.type === 'plan' ? planning.plan : undefined;
}
