import { type ToolCallParser, wholeOutput } from './tool-call.js';

/**
 * The output of `tool_choice: "required"` under guided decoding: a JSON array of
 * `{"name": ..., "parameters": {...}}`, the shape of {@link requiredToolsSchema}.
 */
export const requiredCallsParser: ToolCallParser = {
  name: 'required',
  start: (ctx) =>
    wholeOutput('required', ctx, (text) => {
      try {
        const value: unknown = JSON.parse(text);
        return Array.isArray(value) ? value : 'the guided output is not a JSON array of calls';
      } catch (err) {
        return `broken JSON in the guided output (${(err as Error).message})`;
      }
    }),
};

/** The output of a named `tool_choice` under guided decoding: the function's arguments object alone. */
export function namedCallParser(name: string): ToolCallParser {
  return {
    name: 'named',
    start: (ctx) =>
      wholeOutput('named', ctx, (text) => {
        try {
          return [{ name, arguments: JSON.parse(text) as unknown }];
        } catch (err) {
          return `broken JSON in the guided output (${(err as Error).message})`;
        }
      }),
  };
}

/** A function as the guides need it: its name and its JSON Schema parameters. */
export interface GuidedFunction {
  readonly name: string;
  readonly parameters?: Readonly<Record<string, unknown>>;
}

const ANY_OBJECT = { type: 'object', properties: {} };

/** The guide of `tool_choice: "required"`: at least one call, each naming one of the functions. */
export function requiredToolsSchema(functions: readonly GuidedFunction[]): object {
  return {
    type: 'array',
    minItems: 1,
    items: {
      anyOf: functions.map((f) => ({
        type: 'object',
        properties: { name: { type: 'string', const: f.name }, parameters: f.parameters ?? ANY_OBJECT },
        required: ['name', 'parameters'],
      })),
    },
  };
}

/** The guide of a named `tool_choice`: the function's arguments. */
export function namedToolSchema(f: GuidedFunction): object {
  return f.parameters ?? ANY_OBJECT;
}
