import { ChatTriton } from '@trtllm/langchain';
import { TritonLlmError } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';

function refusal(make: () => unknown): TritonLlmError {
  try {
    make();
  } catch (err) {
    expect(err).toBeInstanceOf(TritonLlmError);
    return err as TritonLlmError;
  }
  throw new Error('not refused');
}

describe('ChatTriton option names', () => {
  it('a misspelt option is refused with the closest one', () => {
    const err = refusal(
      () => new ChatTriton({ grpcUrl: 'http://localhost:8001', modle: 'ensemble' } as never),
    );
    expect(err.code).toBe('invalid_argument');
    expect(err.field).toBe('modle');
    expect(err.message).toBe('modle: unknown option; did you mean model? (got "ensemble")');
    expect(refusal(() => new ChatTriton({ grpcURL: 'http://localhost:8001' } as never)).message).toContain(
      'did you mean grpcUrl?',
    );
    expect(
      refusal(() => new ChatTriton({ grpcUrl: 'http://localhost:8001', maxToken: 5 } as never)).message,
    ).toContain('did you mean maxTokens?');
  });

  it("LangChain's own parameters pass", async () => {
    const model = new ChatTriton({
      grpcUrl: 'http://localhost:8001',
      tags: ['a'],
      metadata: { k: 1 },
      verbose: false,
      maxRetries: 1,
      maxConcurrency: 2,
      disableStreaming: false,
      callbacks: [],
    });
    expect(model.model).toBe('ensemble');
    await model.close();
  });
});
