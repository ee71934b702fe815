import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchReport, type LevelReport, toCsv, toJson, writeReport } from '@trtllm/bench';
import { describe, expect, it } from 'vitest';

const stats = (base: number) => ({
  count: 3,
  mean: base,
  min: base - 1,
  p50: base,
  p90: base + 1,
  p99: base + 2,
  max: base + 3,
});

const streamed: LevelReport = {
  concurrency: 4,
  requests: 10,
  completed: 9,
  errors: 1,
  errorKinds: [{ code: 'internal', message: 'boom, "quoted"', count: 1 }],
  durationS: 2,
  ttftMs: stats(50),
  itlMs: stats(10),
  e2eMs: stats(250),
  requestThroughput: 4.5,
  outputTokens: 180,
  outputTokenThroughput: 90,
  accuracy: { scored: 9, exactMatch: 1, rougeL: 1 },
};

const report: BenchReport = {
  url: 'http://localhost:8001',
  protocol: 'grpc',
  model: 'ens,"emble"',
  streaming: true,
  maxTokens: 20,
  tokenSource: 'server',
  prompts: 2,
  startedAt: '2026-01-01T00:00:00.000Z',
  levels: [
    streamed,
    (({ ttftMs: _dropped, ...rest }: LevelReport): LevelReport => ({
      ...rest,
      concurrency: 16,
      inputTokens: 40,
      inputTokenThroughput: 20,
    }))(streamed),
  ],
};

function parseCsv(text: string): string[][] {
  // Enough of RFC 4180 for this test: quoted cells with doubled quotes and commas.
  return text
    .trimEnd()
    .split('\r\n')
    .map((line) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)].slice(0, -1).map((m) => m[1]!))
    .map((cells) => cells.map((c) => (c.startsWith('"') ? c.slice(1, -1).replaceAll('""', '"') : c)));
}

describe('export', () => {
  it('writes one CSV row per level under a header, quoting where needed and leaving absent metrics empty', () => {
    const rows = parseCsv(toCsv(report));
    expect(rows).toHaveLength(3);
    const [header, first, second] = rows as [string[], string[], string[]];
    const at = (row: string[], column: string) => row[header.indexOf(column)];
    expect(header).toContain('ttft_ms_p50');
    expect(header).toContain('itl_ms_p99');
    expect(header).toContain('rouge_l');
    expect(at(first, 'model')).toBe('ens,"emble"');
    expect(at(first, 'concurrency')).toBe('4');
    expect(at(first, 'ttft_ms_p50')).toBe('50');
    expect(at(first, 'itl_ms_p90')).toBe('11');
    expect(at(first, 'e2e_ms_mean')).toBe('250');
    expect(at(first, 'input_tokens')).toBe('');
    expect(at(first, 'output_token_throughput')).toBe('90');
    expect(at(second, 'concurrency')).toBe('16');
    expect(at(second, 'ttft_ms_p50')).toBe('');
    expect(at(second, 'input_token_throughput')).toBe('20');
    expect(rows.every((r) => r.length === header.length)).toBe(true);
  });

  it('writes JSON that reads back as the report', () => {
    expect(JSON.parse(toJson(report))).toEqual(JSON.parse(JSON.stringify(report)));
  });

  it('picks the format from the file extension and refuses others', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trtllm-bench-'));
    await writeReport(join(dir, 'r.json'), report);
    await writeReport(join(dir, 'r.CSV'), report);
    expect(JSON.parse(await readFile(join(dir, 'r.json'), 'utf8')).levels).toHaveLength(2);
    expect((await readFile(join(dir, 'r.CSV'), 'utf8')).split('\r\n')[0]).toMatch(/^model,protocol,/);
    await expect(writeReport(join(dir, 'r.txt'), report)).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('r.txt'),
    });
  });
});
