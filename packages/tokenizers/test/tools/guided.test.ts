import { namedCallParser, requiredCallsParser } from '@trtllm/tokenizers';
import { describe, expect, test } from 'vitest';
import { runParser } from './run-parser.js';

const KNOWN = ['get_weather', 'get_time'];

describe('guided tool-call outputs', () => {
  test('required: a JSON array of {name, parameters} is the calls, in order', () => {
    const text = '[{"name":"get_weather","parameters":{"city":"text"}},{"name":"get_time","parameters":{}}]';
    const parsed = runParser(requiredCallsParser, KNOWN, ['[{"name":"get_weather",', text.slice(23)]);
    expect(parsed.calls).toEqual([
      { name: 'get_weather', arguments: '{"city":"text"}' },
      { name: 'get_time', arguments: '{}' },
    ]);
    expect(parsed.content).toBeNull();
  });

  test('named: the arguments object alone becomes a call of the named function', () => {
    const parsed = runParser(namedCallParser('get_time'), KNOWN, ['{"zone":', '"text"}']);
    expect(parsed.calls).toEqual([{ name: 'get_time', arguments: '{"zone":"text"}' }]);
  });

  test.each([
    ['required, cut at max_tokens', requiredCallsParser, '[{"name":"get_weather","param'],
    ['required, an empty list', requiredCallsParser, '[]'],
    ['named, cut at max_tokens', namedCallParser('get_time'), '{"zone":"te'],
  ] as const)('%s is text with a warning', (_name, parser, text) => {
    const parsed = runParser(parser, KNOWN, [text]);
    expect(parsed.calls).toEqual([]);
    expect(parsed.content).toBe(text);
    expect(parsed.warnings).toHaveLength(1);
  });
});
