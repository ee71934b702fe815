/**
 * The real Triton's own view of a run: its generator model (`tensorrt_llm`) logs `received` and
 * `completed` for every request, with the outer request's id (test/triton/README.md), so the time
 * it took to generate is known apart from any client. When a client's figures are higher while the
 * server's own were higher too, the server ran slower during that client's run (a 2-core machine
 * shared by server and client); when they are not, the client added the time.
 */
import { readFile } from 'node:fs/promises';

interface Event {
  readonly ts: number;
  readonly model: string;
  readonly id: string;
  readonly event: string;
}

/** Milliseconds from `received` to `completed` of each generation that began in [fromMs, toMs]. */
export async function serverGenerationMs(path: string, fromMs: number, toMs: number): Promise<number[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const open = new Map<string, number>();
  const out: number[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const e = JSON.parse(line) as Event;
    if (e.model !== 'tensorrt_llm') continue;
    if (e.event === 'received' && e.ts >= fromMs && e.ts <= toMs) open.set(e.id, e.ts);
    else if (e.event === 'completed') {
      const start = open.get(e.id);
      if (start !== undefined) {
        out.push(e.ts - start);
        open.delete(e.id);
      }
    }
  }
  return out;
}
