import { ContentGate } from './content-gate.js';
import {
  checkCall,
  parseJson,
  partialMarker,
  type ToolCallParser,
  type ToolCallStream,
  type ToolParseContext,
  type ToolStreamPiece,
} from './tool-call.js';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

/**
 * Hermes-style calls, as Qwen 2.5/3 and the Hermes models write them: any number of
 * `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks among ordinary text. Text
 * streams through as it comes, except a possible start of `<tool_call>`; a block is held until it
 * closes (or the output ends) and becomes a call, or, if its JSON is broken or names an unknown
 * function, goes out as text with a warning.
 */
export const hermesParser: ToolCallParser = {
  name: 'hermes',
  start: hermesStream,
};

function hermesStream(ctx: ToolParseContext): ToolCallStream {
  let buffer = '';
  let inBlock = false;
  const gate = new ContentGate();
  const out: ToolStreamPiece[] = [];

  const finishBlock = (body: string, raw: string): void => {
    const json = parseJson(body.trim());
    const call = 'error' in json ? json.error : checkCall(json.value, ctx);
    if (typeof call === 'string') {
      ctx.warn(`hermes tool-call parser: ${call}; the block is returned as text`);
      gate.add(raw, out);
      return;
    }
    gate.callMade();
    out.push({ type: 'call', call });
  };

  const drain = (): void => {
    for (;;) {
      if (inBlock) {
        const close = buffer.indexOf(CLOSE);
        if (close < 0) return;
        finishBlock(buffer.slice(0, close), OPEN + buffer.slice(0, close + CLOSE.length));
        buffer = buffer.slice(close + CLOSE.length);
        inBlock = false;
        continue;
      }
      const open = buffer.indexOf(OPEN);
      if (open >= 0) {
        gate.add(buffer.slice(0, open), out);
        buffer = buffer.slice(open + OPEN.length);
        inBlock = true;
        continue;
      }
      const keep = partialMarker(buffer, OPEN);
      gate.add(buffer.slice(0, buffer.length - keep), out);
      buffer = buffer.slice(buffer.length - keep);
      return;
    }
  };

  return {
    push(text) {
      buffer += text;
      drain();
      return out.splice(0);
    },
    end() {
      // Some models end at their end-of-turn token without closing the block: a complete call still counts.
      if (inBlock) finishBlock(buffer, OPEN + buffer);
      else gate.add(buffer, out);
      buffer = '';
      inBlock = false;
      gate.end(out);
      return out.splice(0);
    },
  };
}
