import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driveCompletions } from '../../bench/openai/load.js';
import { type FrontEnd, startOurs } from '../../bench/openai/servers.js';

// The throughput part of bench:openai runs `trtllm-openai --workers 2` (packages/openai/dist, as
// users install it): its CPU must be the workers' as well as the primary's, or it would look free.

type Fake = Awaited<ReturnType<typeof startFakeTriton>>;
let fake: Fake;
let ours: FrontEnd;

beforeAll(async () => {
  fake = await startFakeTriton();
  ours = await startOurs(fake.grpcUrl, undefined, 'trtllm-openai, 2 workers', undefined, 2);
}, 60_000);

afterAll(async () => {
  await ours?.stop();
  await fake?.close();
});

/** utime + stime of one process alone, in clock ticks. */
function ownTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** The `x-trtllm-worker` header of a completion sent on a connection of its own. */
function answeringWorker(baseUrl: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL('/v1/completions', baseUrl),
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers['x-trtllm-worker'] as string | undefined));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'ensemble', prompt: 'hi', max_tokens: 2 }));
  });
}

describe('bench:openai workers', () => {
  it('startOurs with 2 workers is ready once both serve, one address for both', async () => {
    const workers = new Set<string | undefined>();
    for (let i = 0; i < 8; i++) workers.add(await answeringWorker(ours.baseUrl));
    expect(workers.has(undefined)).toBe(false);
    expect(workers.size).toBe(2);
    expect(workers.has(String(ours.pid))).toBe(false);
  });

  it("counts the workers' CPU in the front end's, beyond the primary's own", async () => {
    const frontEndBefore = ours.cpuMs();
    const primaryBefore = ownTicks(ours.pid);
    const load = await driveCompletions({
      baseUrl: ours.baseUrl,
      model: 'ensemble',
      concurrency: 16,
      requests: 200,
      maxTokens: 32,
    });
    expect(load.textChunks).toBe(200 * 32);
    const frontEnd = ours.cpuMs() - frontEndBefore;
    // /proc counts in ticks of 10 ms (USER_HZ 100).
    const primary = (ownTicks(ours.pid) - primaryBefore) * 10;
    expect(frontEnd).toBeGreaterThan(primary);
  });
});
