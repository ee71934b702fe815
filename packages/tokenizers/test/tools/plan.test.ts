import type { ModelSchema } from '@trtllm/sdk';
import {
  argumentPieces,
  type ChatTool,
  loadChatTemplate,
  planToolCalls,
  readToolCalls,
  ToolCallReader,
} from '@trtllm/tokenizers';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';

const TOOLS: ChatTool[] = [
  { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  { name: 'get_time' },
];
/** The part of a model schema the plan reads: its inputs, name and flavor. */
const schema = (guided: boolean): ModelSchema =>
  ({
    model: 'm',
    flavor: 'ensemble',
    inputs: new Set(guided ? ['text_input', 'guided_decoding_guide_type'] : ['text_input']),
  }) as unknown as ModelSchema;

describe('planToolCalls', () => {
  test('auto shows the tools and reads the format the template teaches; none and no tools plan nothing', async () => {
    const chatml = await loadChatTemplate({ choice: 'chatml' });
    const llama3 = await loadChatTemplate({ choice: 'llama3' });
    const auto = (template: typeof chatml) =>
      planToolCalls({ tools: TOOLS, choice: 'auto', template, schema: schema(false) });
    const hermes = auto(chatml);
    expect(
      hermes.type === 'plan' && [hermes.plan.parser.name, hermes.plan.tools, hermes.plan.guided],
    ).toEqual(['hermes', TOOLS, undefined]);
    const llama = auto(llama3);
    expect(llama.type === 'plan' && llama.plan.parser.name).toBe('llama3_json');
    expect(planToolCalls({ tools: TOOLS, choice: 'none', template: chatml, schema: schema(true) })).toEqual({
      type: 'off',
    });
    expect(planToolCalls({ tools: [], choice: 'auto', template: chatml, schema: schema(true) })).toEqual({
      type: 'off',
    });
  });

  test('required and a named function are JSON-schema guides; one call at most without parallel calls', async () => {
    const template = await loadChatTemplate({ choice: 'chatml' });
    const required = planToolCalls({
      tools: TOOLS,
      choice: 'required',
      parallel: false,
      template,
      schema: schema(true),
    });
    if (required.type !== 'plan') throw new Error(`planned ${required.type}`);
    expect(required.plan.guided?.type).toBe('json_schema');
    expect(JSON.parse(required.plan.guided!.guide)).toMatchObject({
      type: 'array',
      minItems: 1,
      maxItems: 1,
    });
    const named = planToolCalls({
      tools: TOOLS,
      choice: { name: 'get_weather' },
      template,
      schema: schema(true),
    });
    if (named.type !== 'plan') throw new Error(`planned ${named.type}`);
    expect(JSON.parse(named.plan.guided!.guide)).toEqual(TOOLS[0]!.parameters);
  });

  test('what the deployment cannot do comes back with its reason; a name that is no tool is an error', async () => {
    const llama2 = await loadChatTemplate({ choice: 'llama2' });
    const chatml = await loadChatTemplate({ choice: 'chatml' });
    const noTemplate = planToolCalls({
      tools: TOOLS,
      choice: 'auto',
      template: llama2,
      schema: schema(true),
    });
    expect(noTemplate.type === 'unsupported' && [noTemplate.needs, noTemplate.error.code]).toEqual([
      'template',
      'invalid_argument',
    ]);
    const noGuide = planToolCalls({
      tools: TOOLS,
      choice: 'required',
      template: chatml,
      schema: schema(false),
      names: { toolChoice: 'tool_choice' },
    });
    expect(noGuide.type === 'unsupported' && noGuide.needs).toBe('guided_decoding');
    expect(noGuide.type === 'unsupported' && noGuide.error.message).toMatch(
      /^tool_choice: "required" needs guided decoding/,
    );
    expect(() =>
      planToolCalls({ tools: TOOLS, choice: { name: 'nope' }, template: chatml, schema: schema(false) }),
    ).toThrow(/toolChoice: must name one of the tools/);
  });
});

describe('ToolCallReader', () => {
  test('numbers the calls in order and reads the same however the text is cut', async () => {
    const template = await loadChatTemplate({ choice: 'chatml' });
    const planning = planToolCalls({ tools: TOOLS, choice: 'auto', template, schema: schema(false) });
    if (planning.type !== 'plan') throw new Error(`planned ${planning.type}`);
    const text =
      'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Köln"}}\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';
    const whole = readToolCalls(planning.plan, () => undefined, text);
    expect(whole).toEqual({
      text: 'Sure.',
      calls: [
        { name: 'get_weather', arguments: '{"city":"Köln"}' },
        { name: 'get_time', arguments: '{}' },
      ],
    });
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 10 }), (cuts) => {
        const at = [0, ...[...new Set(cuts)].sort((a, b) => a - b), text.length];
        const reader = new ToolCallReader(planning.plan, () => undefined);
        const pieces = [
          ...at.slice(1).flatMap((end, i) => reader.push(text.slice(at[i], end))),
          ...reader.end(),
        ];
        expect(pieces.flatMap((p) => (p.type === 'call' ? [[p.index, p.call]] : []))).toEqual(
          whole.calls.map((c, i) => [i, c]),
        );
        expect(reader.callCount).toBe(2);
      }),
    );
  });

  test('argumentPieces joins back to the arguments text exactly', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (args) => {
        const text = JSON.stringify(args);
        expect(argumentPieces(text).join('')).toBe(text);
      }),
    );
  });
});
