import { describe, expect, it } from 'vitest';
import { runScript } from './child-process.js';

describe('await using', () => {
  it('closes the fake, a gRPC transport and a client (with its HTTP transport) when the block ends', async () => {
    // The script starts its own fake: disposing it is part of what it checks.
    const run = await runScript('dispose', { grpcUrl: 'unused:', httpUrl: 'unused:' });
    expect(run.killed).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    const after = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(after).toEqual({
      grpc: expect.stringMatching(/^unavailable: .*closed/),
      http: expect.stringMatching(/^unavailable: .*closed/),
      fakeListening: false,
    });
  }, 60_000);
});
