import { llama3JsonParser } from '@trtllm/tokenizers';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { runParser, splitsOf } from './run-parser.js';

const KNOWN = ['get_current_conditions', 'get_weather', 'spotify_trending_songs'];

// Outputs in the shapes of the Llama 3.1 / 3.2 model cards and prompt-format docs.
const CASES = [
  {
    name: 'one JSON call (Llama 3.1 card)',
    text: '{"name": "get_current_conditions", "parameters": {"location": "San Francisco, CA", "unit": "Fahrenheit"}}',
    calls: [
      { name: 'get_current_conditions', arguments: '{"location":"San Francisco, CA","unit":"Fahrenheit"}' },
    ],
  },
  {
    name: 'after <|python_tag|>',
    text: '<|python_tag|>{"name": "spotify_trending_songs", "parameters": {"n": "5"}}',
    calls: [{ name: 'spotify_trending_songs', arguments: '{"n":"5"}' }],
  },
  {
    name: 'several calls separated by ";"',
    text:
      '{"name": "get_weather", "parameters": {"city": "Paris"}}; ' +
      '{"name": "get_weather", "parameters": {"city": "Rome; Italy"}}',
    calls: [
      { name: 'get_weather', arguments: '{"city":"Paris"}' },
      { name: 'get_weather', arguments: '{"city":"Rome; Italy"}' },
    ],
  },
  {
    name: '"arguments" is accepted for "parameters", leading whitespace too',
    text: '\n {"name": "get_weather", "arguments": {"city": "Oslo"}}',
    calls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }],
  },
] as const;

const MALFORMED = [
  { name: 'broken JSON', text: '{"name": "get_weather", "parameters": {"city": "Pa' },
  { name: 'an unknown function', text: '{"name": "book_flight", "parameters": {}}' },
  {
    name: 'one good and one unknown call (no partial result)',
    text: '{"name": "get_weather", "parameters": {}}; {"name": "x", "parameters": {}}',
  },
  { name: 'text after the JSON', text: '{"name": "get_weather", "parameters": {}} and then some' },
];

describe('llama3_json tool-call parser', () => {
  test.each(CASES)('$name', ({ text, calls }) => {
    const parsed = runParser(llama3JsonParser, KNOWN, [text]);
    expect(parsed.calls).toEqual(calls);
    expect(parsed.content).toBeNull();
    expect(parsed.warnings).toEqual([]);
  });

  test.each(MALFORMED)('$name comes back as text with a warning, never a call', ({ text }) => {
    const parsed = runParser(llama3JsonParser, KNOWN, [text]);
    expect(parsed.calls).toEqual([]);
    expect(parsed.content).toBe(text);
    expect(parsed.warnings).toHaveLength(1);
    expect(parsed.warnings[0]).toMatch(/^llama3_json tool-call parser: /);
  });

  test('an answer that does not start like a call is text, streamed at once', () => {
    const stream = llama3JsonParser.start({ known: new Set(KNOWN), warn: () => undefined });
    expect(stream.push('  ')).toEqual([]);
    expect(stream.push('It is sunny {"name": 1}')).toEqual([
      { type: 'content', text: '  It is sunny {"name": 1}' },
    ]);
    expect(stream.push(' today.')).toEqual([{ type: 'content', text: ' today.' }]);
    expect(stream.end()).toEqual([]);
  });

  test('streaming in any pieces gives what parsing the whole output gives', () => {
    const texts = [...CASES.map((c) => c.text), ...MALFORMED.map((c) => c.text), 'Plain <|python answer'];
    fc.assert(
      fc.property(
        fc.constantFrom(...texts).chain((t) => fc.tuple(fc.constant(t), splitsOf(t))),
        ([text, pieces]) => {
          expect(runParser(llama3JsonParser, KNOWN, pieces)).toEqual(
            runParser(llama3JsonParser, KNOWN, [text]),
          );
        },
      ),
    );
  });
});
