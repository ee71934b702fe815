import type { ToolStreamPiece } from './tool-call.js';

/**
 * The text around tool calls. Whitespace that only separates text from a call (the newline before
 * `<tool_call>`, the one after `</tool_call>`) is not content; elsewhere text passes unchanged. The
 * trailing whitespace of a piece waits until the next piece shows which it is, so streamed and
 * whole-output parsing give the same content.
 */
export class ContentGate {
  private held = '';
  private afterCall = false;
  private calls = 0;

  add(text: string, out: ToolStreamPiece[]): void {
    let s = text;
    if (this.afterCall) {
      s = s.trimStart();
      if (s.length === 0) return;
      this.afterCall = false;
    }
    s = this.held + s;
    const body = s.trimEnd();
    this.held = s.slice(body.length);
    if (body.length > 0) out.push({ type: 'content', text: body });
  }

  callMade(): void {
    this.held = '';
    this.afterCall = true;
    this.calls++;
  }

  /** Output without calls keeps its trailing whitespace; after a call it is a separator. */
  end(out: ToolStreamPiece[]): void {
    if (this.calls === 0 && this.held.length > 0) out.push({ type: 'content', text: this.held });
    this.held = '';
  }
}
