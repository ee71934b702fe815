import { type SseText, sseEvent, sseText } from './sse.js';

// A string no chunk holds of itself: JSON.stringify escapes it to six-character sequences.
const MARK = '\u0000\u0001trtllm-text\u0001\u0000';
const MARK_JSON = JSON.stringify(MARK);

/**
 * The SSE event of a chunk whose only varying field is one string: the chunk is serialized once
 * with a marker in that field and split there, so each token costs a JSON.stringify of its text
 * alone. The output is byte for byte what `sseEvent(JSON.stringify(build(text)))` writes (issue 31:
 * serializing the whole chunk object was the OpenAI layer's largest cost per token); only a
 * token's own text is ever converted to UTF-8 bytes (see {@link SseText}).
 */
export function chunkTemplate(build: (text: string) => unknown): (text: string) => SseText {
  const whole = sseEvent(JSON.stringify(build(MARK)));
  const at = whole.indexOf(MARK_JSON);
  if (at < 0 || whole.indexOf(MARK_JSON, at + 1) >= 0) {
    // The field did not come out once (a build that ignores or repeats it): serialize each time.
    return (text) => sseEvent(JSON.stringify(build(text)));
  }
  // The marker is ASCII, so it sits at the same characters in the event's bytes.
  const prefix = whole.slice(0, at);
  const suffix = whole.slice(at + MARK_JSON.length);
  return (text) => (prefix + sseText(JSON.stringify(text)) + suffix) as SseText;
}

/**
 * {@link chunkTemplate} per choice: the event of choice `index` carrying `text`, its template made
 * on the choice's first chunk and kept for the rest of the response.
 */
export function choiceTemplates(
  build: (index: number, text: string) => unknown,
): (index: number, text: string) => SseText {
  const templates: ((text: string) => SseText)[] = [];
  return (index, text) => {
    let template = templates[index];
    if (template === undefined) {
      template = chunkTemplate((t) => build(index, t));
      templates[index] = template;
    }
    return template(text);
  };
}
