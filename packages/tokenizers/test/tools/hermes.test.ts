import { hermesParser } from '@trtllm/tokenizers';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { runParser, splitsOf } from './run-parser.js';

const KNOWN = ['get_stock_fundamentals', 'get_current_temperature', 'get_temperature_date'];

// Outputs in the shapes the Hermes 2 Pro model card and Qwen's function-calling guide show.
const CASES = [
  {
    name: 'one call, arguments before name (Hermes 2 Pro card)',
    text: '<tool_call>\n{"arguments": {"symbol": "TSLA"}, "name": "get_stock_fundamentals"}\n</tool_call>',
    content: null,
    calls: [{ name: 'get_stock_fundamentals', arguments: '{"symbol":"TSLA"}' }],
  },
  {
    name: 'two calls in a row (Qwen 2.5 guide)',
    text:
      '<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "San Francisco, CA, USA"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "get_temperature_date", "arguments": {"location": "San Francisco, CA, USA", "date": "2024-10-01"}}\n</tool_call>',
    content: null,
    calls: [
      { name: 'get_current_temperature', arguments: '{"location":"San Francisco, CA, USA"}' },
      {
        name: 'get_temperature_date',
        arguments: '{"location":"San Francisco, CA, USA","date":"2024-10-01"}',
      },
    ],
  },
  {
    name: 'text before a call is content',
    text: 'Let me look that up.\n<tool_call>\n{"name": "get_stock_fundamentals", "arguments": {"symbol": "NVDA"}}\n</tool_call>',
    content: 'Let me look that up.',
    calls: [{ name: 'get_stock_fundamentals', arguments: '{"symbol":"NVDA"}' }],
  },
  {
    name: 'a block the model did not close still counts when its JSON is whole',
    text: '<tool_call>\n{"name": "get_stock_fundamentals", "arguments": {"symbol": "AMD"}}\n',
    content: null,
    calls: [{ name: 'get_stock_fundamentals', arguments: '{"symbol":"AMD"}' }],
  },
  {
    name: 'no arguments is an empty object',
    text: '<tool_call>{"name": "get_current_temperature"}</tool_call>',
    content: null,
    calls: [{ name: 'get_current_temperature', arguments: '{}' }],
  },
  {
    name: 'plain text passes unchanged, trailing newline and all',
    text: 'The temperature is 26 C.\n',
    content: 'The temperature is 26 C.\n',
    calls: [],
  },
  {
    name: 'a lone "<" that is not a tag is text',
    text: 'a < b and <tool_ is not a call',
    content: 'a < b and <tool_ is not a call',
    calls: [],
  },
] as const;

const MALFORMED = [
  {
    name: 'broken JSON inside the block',
    text: 'Sure.\n<tool_call>\n{"name": "get_stock_fundamentals", "arguments": {"symbol": \n</tool_call>',
  },
  {
    name: 'an unknown function',
    text: '<tool_call>\n{"name": "launch_rocket", "arguments": {}}\n</tool_call>',
  },
  { name: 'an unclosed block cut short', text: '<tool_call>\n{"name": "get_stock_fund' },
  {
    name: 'arguments that are not an object',
    text: '<tool_call>{"name": "get_stock_fundamentals", "arguments": [1, 2]}</tool_call>',
  },
];

describe('hermes tool-call parser', () => {
  test.each(CASES)('$name', ({ text, content, calls }) => {
    const parsed = runParser(hermesParser, KNOWN, [text]);
    expect(parsed.content).toBe(content);
    expect(parsed.calls).toEqual(calls);
    expect(parsed.warnings).toEqual([]);
  });

  test.each(MALFORMED)('$name comes back as text with a warning, never a call', ({ text }) => {
    const parsed = runParser(hermesParser, KNOWN, [text]);
    expect(parsed.calls).toEqual([]);
    expect(parsed.content).toBe(text);
    expect(parsed.warnings).toHaveLength(1);
    expect(parsed.warnings[0]).toMatch(/^hermes tool-call parser: /);
  });

  test('a good call next to a broken block keeps the call and returns the block as text', () => {
    const broken = '<tool_call>{"name": "nope"}</tool_call>';
    const good =
      '<tool_call>{"name": "get_current_temperature", "arguments": {"location": "Oslo"}}</tool_call>';
    const parsed = runParser(hermesParser, KNOWN, [`${good}\n${broken}`]);
    expect(parsed.calls).toEqual([{ name: 'get_current_temperature', arguments: '{"location":"Oslo"}' }]);
    expect(parsed.content).toBe(broken);
  });

  test('streaming in any pieces gives what parsing the whole output gives', () => {
    const texts = [...CASES.map((c) => c.text), ...MALFORMED.map((c) => c.text)];
    fc.assert(
      fc.property(
        fc.constantFrom(...texts).chain((t) => fc.tuple(fc.constant(t), splitsOf(t))),
        ([text, pieces]) => {
          expect(runParser(hermesParser, KNOWN, pieces)).toEqual(runParser(hermesParser, KNOWN, [text]));
        },
      ),
    );
  });

  test('text before a call streams before the call is complete', () => {
    const stream = hermesParser.start({ known: new Set(KNOWN), warn: () => undefined });
    expect(stream.push('Checking')).toEqual([{ type: 'content', text: 'Checking' }]);
    expect(stream.push(' now.\n<tool')).toEqual([{ type: 'content', text: ' now.' }]);
    expect(stream.push('_call>{"name": "get_current_temperature"')).toEqual([]);
    expect(stream.push('}</tool_call>')).toEqual([
      { type: 'call', call: { name: 'get_current_temperature', arguments: '{}' } },
    ]);
    expect(stream.end()).toEqual([]);
  });
});
