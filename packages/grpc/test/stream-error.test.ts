import { ERROR_CODES } from '@trtllm/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { streamErrorFromMessage } from '../src/transport/error-mapping.js';

const context = { model: 'tensorrt_llm', requestId: '7' };

describe('in-stream error messages', () => {
  it.each([
    ["Request for unknown model: 'nope' is not found", 'not_found'],
    [
      "[request id: 7] expected number of inputs between 2 and 3 but got 1 inputs for model 'tensorrt_llm'",
      'invalid_argument',
    ],
    ["[request id: 7] unexpected inference input 'foo' for model 'tensorrt_llm'", 'invalid_argument'],
    ["Unable to parse 'data': Shape does not match true shape of 'data' field", 'invalid_argument'],
    ['Beam search (beam_width > 1) is not supported with streaming.', 'invalid_argument'],
    ['Streaming is only supported if model is deployed using decoupled mode.', 'invalid_argument'],
    ['Request was cancelled', 'cancelled'],
    ['boom mid-stream', 'internal'],
  ])('%s -> %s', (message, code) => {
    expect(streamErrorFromMessage(message, context).code).toBe(code);
  });

  it('keeps any server message verbatim, with the request id, under a known code', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (message) => {
        const err = streamErrorFromMessage(message, context);
        expect(err.serverMessage).toBe(message);
        expect(err.requestId).toBe('7');
        expect(err.model).toBe('tensorrt_llm');
        expect(ERROR_CODES).toContain(err.code);
      }),
    );
  });
});
