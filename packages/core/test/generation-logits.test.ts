import { describe, expect, it } from 'vitest';
import { createTensor, type InferResponse, type ModelConfig } from '../src/index.js';
import { decodeResponse } from '../src/models/decode-response.js';
import { detectSchema } from '../src/transport-kit.js';

const RAW: ModelConfig = {
  name: 'tensorrt_llm',
  platform: '',
  backend: 'tensorrtllm',
  maxBatchSize: 64,
  inputs: [
    { name: 'input_ids', datatype: 'INT32', dims: [-1], optional: false },
    { name: 'input_lengths', datatype: 'INT32', dims: [1], optional: false },
    { name: 'request_output_len', datatype: 'INT32', dims: [1], optional: false },
  ],
  outputs: [],
  decoupled: false,
  parameters: {},
};

const WANTS = { logProbs: false, perfMetrics: false, contextLogits: false, generationLogits: true } as const;

describe('generation logits', () => {
  it('are split per sequence when a response holds several beams', () => {
    const [beams, tokens, vocab] = [3, 2, 4];
    const logits = Array.from({ length: beams * tokens * vocab }, (_, i) => i / 8);
    const response: InferResponse = {
      model: 'tensorrt_llm',
      modelVersion: '1',
      id: '1',
      parameters: {},
      final: true,
      outputs: [
        createTensor('output_ids', 'INT32', [1, beams, tokens], [5, 6, 7, 8, 9, 10]),
        createTensor('sequence_length', 'INT32', [1, beams], [2, 2, 2]),
        createTensor('generation_logits', 'FP32', [1, beams, tokens, vocab], logits),
      ],
    };
    const decoded = decodeResponse(response, detectSchema(RAW), WANTS);
    expect(decoded.sequences).toHaveLength(beams);
    decoded.sequences.forEach((seq, b) => {
      expect(seq.generationLogits?.shape).toEqual([1, 1, tokens, vocab]);
      const own = logits.slice(b * tokens * vocab, (b + 1) * tokens * vocab);
      expect(Array.from(seq.generationLogits?.data ?? [])).toEqual(own);
    });
  });
});
