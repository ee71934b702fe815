import { describe, expect, it } from 'vitest';
import { codeFromServerError } from '../src/transport-kit.js';

// Texts as Triton 2.51 and the official TensorRT-LLM models sent them (shared/triton-cpu.md, issue 28).
const UNKNOWN_MODEL = "Request for unknown model: 'nope' is not found";
const WRONG_TYPE =
  "Traceback (most recent call last): ... inference input 'SEQUENCE_LENGTH' data-type is 'FP64', but model 'postprocessing' expects 'INT32'";
const NOT_JSON = 'failed to parse the request JSON buffer: Invalid value. at 1';
const CALLEE_NOT_READY =
  "Model tensorrt_llm - Error when running inference: Failed for execute the inference request. Model 'tensorrt_llm' is not ready.";
const DECOUPLED_GENERATE =
  'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses';

describe('codeFromServerError', () => {
  it('gives a model failure the class its text names, with or without the generic status', () => {
    // gRPC in-stream text (no status), HTTP 500 and an SSE error event after status 200.
    expect(codeFromServerError(WRONG_TYPE)).toBe('invalid_argument');
    expect(codeFromServerError(WRONG_TYPE, 'internal')).toBe('invalid_argument');
    expect(codeFromServerError(WRONG_TYPE, 'unknown')).toBe('invalid_argument');
  });

  it('keeps a specific status over the text', () => {
    expect(codeFromServerError(WRONG_TYPE, 'resource_exhausted')).toBe('resource_exhausted');
    expect(codeFromServerError('must be a string', 'failed_precondition')).toBe('failed_precondition');
  });

  it('reads an unknown model as not_found, also when it came as unavailable', () => {
    expect(codeFromServerError(UNKNOWN_MODEL)).toBe('not_found');
    expect(codeFromServerError(UNKNOWN_MODEL, 'unavailable')).toBe('not_found');
    expect(codeFromServerError('connection reset', 'unavailable')).toBe('unavailable');
  });

  it('reads a model that a BLS calls and that is not loaded as unavailable (gRPC in-stream, HTTP 400 or INTERNAL)', () => {
    expect(codeFromServerError(CALLEE_NOT_READY)).toBe('unavailable');
    expect(codeFromServerError(CALLEE_NOT_READY, 'internal')).toBe('unavailable');
  });

  it('reads the statistics of a missing model or version as not_found, though Triton says invalid argument', () => {
    expect(codeFromServerError("requested model 'nope' is not available", 'invalid_argument')).toBe(
      'not_found',
    );
    expect(
      codeFromServerError(
        "requested model version is not available for model 'ensemble'",
        'invalid_argument',
      ),
    ).toBe('not_found');
  });

  it('reads /generate on a decoupled model as unimplemented', () => {
    expect(codeFromServerError(DECOUPLED_GENERATE)).toBe('unimplemented');
  });

  it('leaves an unclassified failure internal', () => {
    expect(codeFromServerError(NOT_JSON, 'internal')).toBe('internal');
    expect(codeFromServerError('boom mid-stream')).toBe('internal');
  });
});
