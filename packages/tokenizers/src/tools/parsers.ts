import { hermesParser } from './hermes.js';
import { llama3JsonParser } from './llama3-json.js';
import type { ToolCallParser } from './tool-call.js';

/** Tool-call parser names: a format by name, or `auto` to recognise it from the chat template. */
export const TOOL_CALL_PARSERS = ['auto', 'hermes', 'llama3_json'] as const;

/** One of {@link TOOL_CALL_PARSERS}. */
export type ToolCallParserChoice = (typeof TOOL_CALL_PARSERS)[number];

/**
 * The parser for `choice`; with `auto`, the format the template teaches the model (its
 * `<tool_call>` blocks, or Llama's `<|python_tag|>` / `"parameters"` JSON), or undefined when the
 * template shows neither.
 */
export function pickToolCallParser(
  choice: ToolCallParserChoice,
  templateText: string,
): ToolCallParser | undefined {
  if (choice === 'hermes') return hermesParser;
  if (choice === 'llama3_json') return llama3JsonParser;
  if (templateText.includes('<tool_call>')) return hermesParser;
  if (
    templateText.includes('<|python_tag|>') ||
    (templateText.includes('<|start_header_id|>') && templateText.includes('"parameters"'))
  ) {
    return llama3JsonParser;
  }
  return undefined;
}
