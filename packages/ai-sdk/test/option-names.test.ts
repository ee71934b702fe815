import { createTriton } from '@trtllm/ai-sdk';
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

describe('createTriton option names', () => {
  it('a misspelt option is refused with the closest one, before any connection', () => {
    const err = refusal(() => createTriton({ grpcURL: 'http://localhost:8001' } as never));
    expect(err.code).toBe('invalid_argument');
    expect(err.field).toBe('grpcURL');
    expect(err.message).toBe('grpcURL: unknown option; did you mean grpcUrl? (got "http://localhost:8001")');
  });

  it('the OpenAI spelling and other unknown options are refused too', () => {
    expect(refusal(() => createTriton({ tokenizerDri: '/m' } as never)).message).toContain(
      'did you mean tokenizerDir?',
    );
    expect(refusal(() => createTriton({ server: 'x' } as never)).message).toBe(
      'server: unknown option (got "x")',
    );
  });

  it("a model's settings are checked by name as well", () => {
    const triton = createTriton({ httpUrl: 'http://localhost:8000' });
    expect(refusal(() => triton('ensemble', { defaultMaxToken: 5 } as never)).message).toContain(
      'did you mean defaultMaxTokens?',
    );
  });
});
