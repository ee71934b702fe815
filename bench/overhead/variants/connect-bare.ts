import { create } from '@bufbuild/protobuf';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import {
  GRPCInferenceService,
  type ModelInferRequest,
  ModelInferRequestSchema,
} from '../../../packages/grpc/src/gen/inference/grpc_service_pb.js';
import { ensembleRequestInit, firstString } from '../wire.js';
import type { Endpoints, Variant } from './variant.js';

/**
 * The least a connect-node user writes: the generated client of packages/grpc/src/gen, one
 * `ModelStreamInfer` call per request (as the SDK does, so a cancel stays per request), raw input
 * contents, and `text_output` decoded by hand.
 */
export function connectBareVariant(endpoints: Endpoints): Variant {
  const transport = createGrpcTransport({ baseUrl: endpoints.grpcUrl });
  const client = createClient(GRPCInferenceService, transport);
  return {
    async stream(prompt, maxTokens, id, onFirstToken) {
      const request = create(ModelInferRequestSchema, ensembleRequestInit(prompt, maxTokens, id));
      let release: () => void = () => undefined;
      const finished = new Promise<void>((resolve) => {
        release = resolve;
      });
      // The request side stays open until the final response, then closes so the call ends cleanly.
      async function* requests(): AsyncGenerator<ModelInferRequest> {
        yield request;
        await finished;
      }
      let tokens = 0;
      let text = '';
      for await (const message of client.modelStreamInfer(requests())) {
        if (message.errorMessage !== '') throw new Error(message.errorMessage);
        const response = message.inferResponse;
        if (response === undefined) continue;
        const index = response.outputs.findIndex((o) => o.name === 'text_output');
        const raw = index >= 0 ? response.rawOutputContents[index] : undefined;
        if (raw !== undefined) {
          if (tokens === 0) onFirstToken?.();
          tokens += 1;
          text += firstString(raw);
        }
        const final = response.parameters.triton_final_response?.parameterChoice;
        if (final?.case === 'boolParam' && final.value) release();
      }
      if (tokens > 0 && text.length === 0) throw new Error('tokens counted but no text received');
      return tokens;
    },
    close: async () => undefined,
  };
}
