import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type Transport, TritonLlm } from '@trtllm/sdk';
import type { Endpoints, Variant } from './variant.js';

/** `TritonLlm` as a user would call it: `stream()`, text joined from the chunks, usage from the final chunk. */
export function sdkVariant(
  protocol: 'grpc' | 'http',
  endpoints: Endpoints,
  grpcOptions: { readonly multiplex?: boolean } = {},
): Variant {
  const transport: Transport =
    protocol === 'grpc'
      ? grpcTransport({ baseUrl: endpoints.grpcUrl, ...grpcOptions })
      : httpTransport({ baseUrl: endpoints.httpUrl });
  const llm = new TritonLlm({ transport, model: 'ensemble' });
  return {
    async stream(prompt, maxTokens, _id, onFirstToken) {
      let text = '';
      let first = true;
      let tokens = 0;
      for await (const chunk of llm.stream({ prompt, maxTokens })) {
        if (chunk.done) {
          tokens = chunk.usage.completionTokens ?? 0;
          continue;
        }
        if (first) {
          first = false;
          onFirstToken?.();
        }
        text += chunk.text;
      }
      if (text.length === 0 && tokens > 0) throw new Error('tokens counted but no text received');
      return tokens;
    },
    close: () => llm.close(),
  };
}
