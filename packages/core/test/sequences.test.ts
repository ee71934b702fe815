/**
 * Sequence assembly: several sequences (beams, `numReturnSequences`) told apart and put back
 * together, prompt and end ids cut from raw ids, token counts and finish reasons where the model
 * tells them and absent where it does not. Expectations follow the README's flavor table and
 * shared/protocol/trtllm-models.md (output shapes).
 */
import { describe, expect, it } from 'vitest';
import {
  type DeltaChunk,
  type GenerateResult,
  type ModelConfig,
  type StreamChunk,
  TritonLlm,
} from '../src/index.js';
import {
  ensemble,
  ids,
  llmApi,
  rawModel,
  type Script,
  ScriptedTransport,
  text,
} from './scripted-transport.js';

function client(config: ModelConfig, ...scripts: Script[]): { llm: TritonLlm; wire: ScriptedTransport } {
  const wire = new ScriptedTransport(config, scripts);
  return { llm: new TritonLlm({ transport: wire, model: config.name, logger: { warn: () => {} } }), wire };
}

async function chunksOf(stream: AsyncIterable<StreamChunk>): Promise<[DeltaChunk[], GenerateResult]> {
  const chunks: DeltaChunk[] = [];
  let result: GenerateResult | undefined;
  for await (const chunk of stream) {
    if (chunk.done) result = chunk.result;
    else chunks.push(chunk);
  }
  if (result === undefined) throw new Error('the stream ended without a final chunk');
  return [chunks, result];
}

describe('several sequences', () => {
  it('streamed ones are told apart by sequence_index and returned in index order', async () => {
    const { llm } = client(ensemble(), {
      steps: [
        text('B1', { sequenceIndex: 1 }),
        text('A1', { sequenceIndex: 0 }),
        text('B2', { sequenceIndex: 1 }),
        text('A2', { sequenceIndex: 0, final: true }),
      ],
    });
    const [chunks, result] = await chunksOf(
      llm.stream({ prompt: 'Hi', maxTokens: 8, numReturnSequences: 2 }),
    );

    expect(chunks.map((c) => [c.sequenceIndex, c.text, c.totalTokens])).toEqual([
      [1, 'B1', 1],
      [0, 'A1', 1],
      [1, 'B2', 2],
      [0, 'A2', 2],
    ]);
    expect(result.sequences.map((s) => [s.index, s.text, s.tokenCount])).toEqual([
      [0, 'A1A2', 2],
      [1, 'B1B2', 2],
    ]);
    expect(result.text).toBe('A1A2');
    expect(result.usage.completionTokens).toBe(4);
  });

  it('sequence_index is asked for only by a request for several sequences', async () => {
    const { llm, wire } = client(
      ensemble(),
      { steps: [text('A1', { final: true })] },
      { steps: [text('A1', { sequenceIndex: 0 }), text('B1', { sequenceIndex: 1, final: true })] },
    );
    await llm.generate({ prompt: 'Hi', maxTokens: 8 });
    await llm.generate({ prompt: 'Hi', maxTokens: 8, numReturnSequences: 2 });

    // Every other request's responses are of sequence 0: the counter would ride along with every token.
    expect(wire.requests[0]?.outputs).not.toContain('sequence_index');
    expect(wire.requests[0]?.outputs).toContain('text_output');
    expect(wire.requests[1]?.outputs).toContain('sequence_index');
  });

  it('raw beams: each row cut to its sequence_length, the echoed prompt and trailing end ids dropped', async () => {
    const prompt = [5, 6];
    const { llm } = client(rawModel({ decoupled: false, echoes: true }), {
      steps: [
        ids(
          [
            [...prompt, 20, 21, 2, 2],
            [...prompt, 30, 31, 32],
          ],
          { final: true, lengths: [6, 5] },
        ),
      ],
    });
    const result = await llm.generate({ inputIds: prompt, maxTokens: 3, beamWidth: 2, endId: 2 });

    expect(result.sequences.map((s) => [s.index, s.tokenIds, s.tokenCount, s.finishReason])).toEqual([
      [0, [20, 21], 2, 'stop'],
      [1, [30, 31, 32], 3, 'length'],
    ]);
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toEqual({ promptTokens: 2, completionTokens: 5 });
  });

  it('ensemble beams in one response: no per-beam count, so every count and the total are absent', async () => {
    const { llm } = client(ensemble({ decoupled: false, counts: true }), {
      steps: [text(['x', 'y'], { final: true, numOutputTokens: 4 })],
    });
    const result = await llm.generate({ prompt: 'Hi', maxTokens: 8, beamWidth: 2 });

    expect(result.sequences.map((s) => s.text)).toEqual(['x', 'y']);
    expect(result.sequences.map((s) => 'tokenCount' in s)).toEqual([false, false]);
    expect('completionTokens' in result.usage).toBe(false);
  });
});

describe('token counts and finish reasons', () => {
  it('absent, never 0, when an ensemble answers with text only; the finish reason is then unknown', async () => {
    const { llm } = client(ensemble({ decoupled: false }), { steps: [text('hello', { final: true })] });
    const result = await llm.generate({ prompt: 'Hi', maxTokens: 8 });

    expect(result.text).toBe('hello');
    expect(result.usage).toEqual({});
    expect('tokenCount' in result.sequences[0]!).toBe(false);
    expect(result.finishReason).toBe('unknown');
  });

  it("asked for where the model can tell them, and the server's count decides length or stop", async () => {
    const { llm, wire } = client(
      ensemble({ decoupled: false, counts: true }),
      { steps: [text('hello', { final: true, numOutputTokens: 8 })] },
      { steps: [text('hi', { final: true, numOutputTokens: 3 })] },
    );
    const full = await llm.generate({ prompt: 'Hi', maxTokens: 8 });
    const short = await llm.generate({ prompt: 'Hi', maxTokens: 8 });

    expect(wire.requests[0]?.inputs.some((t) => t.name === 'return_num_output_tokens')).toBe(true);
    expect([full.usage.completionTokens, full.finishReason]).toEqual([8, 'length']);
    expect([short.usage.completionTokens, short.finishReason]).toEqual([3, 'stop']);
  });

  it('one per streamed ensemble response: reaching maxTokens is length', async () => {
    const { llm } = client(ensemble(), { steps: [text('a'), text('b'), text('c', { final: true })] });
    const [, result] = await chunksOf(llm.stream({ prompt: 'Hi', maxTokens: 3 }));

    expect(result.usage.completionTokens).toBe(3);
    expect(result.finishReason).toBe('length');
  });

  it("absent for the LLM-API model, whose finish reason is the model's own", async () => {
    const { llm } = client(llmApi(), {
      steps: [text('Hel'), text('Hello'), text('Hello!', { final: true, finishReason: 'length' })],
    });
    const [chunks, result] = await chunksOf(llm.stream({ prompt: 'Hi', maxTokens: 8 }));

    expect(chunks.map((c) => c.text)).toEqual(['Hel', 'lo', '!']);
    expect(result.text).toBe('Hello!');
    expect('completionTokens' in result.usage).toBe(false);
    expect('tokenCount' in result.sequences[0]!).toBe(false);
    expect(result.finishReason).toBe('length');
  });
});
