import { readFileSync } from 'node:fs';
import type { FakeEvent } from '@trtllm/testing';

/** The events of the real Triton's generator models (GENERATOR.md "Event log"): one JSON object per line. */
export function readEventLog(path: string): FakeEvent[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const out: FakeEvent[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as FakeEvent);
    } catch {
      // A line being written right now; the next read sees it whole.
    }
  }
  return out;
}
