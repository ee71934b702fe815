import { fileURLToPath } from 'node:url';
import {
  type ClientDuplexStream,
  credentials,
  loadPackageDefinition,
  type ServiceClientConstructor,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boolTensor, bytesTensor, ENSEMBLE_INPUTS, firstString, int32Tensor } from '../wire.js';
import type { Endpoints, Variant } from './variant.js';

interface Parameter {
  readonly bool_param?: boolean;
}
interface StreamResponse {
  readonly error_message: string;
  readonly infer_response?: {
    readonly outputs: readonly { readonly name: string }[];
    readonly raw_output_contents: readonly Buffer[];
    readonly parameters: Readonly<Record<string, Parameter>>;
  } | null;
}
type StreamCall = ClientDuplexStream<object, StreamResponse>;
interface InferenceClient {
  ModelStreamInfer(): StreamCall;
  close(): void;
}

const PROTO_DIR = fileURLToPath(new URL('../../../proto', import.meta.url));

/**
 * The least a grpc-js user writes: proto-loader over our proto/, one `ModelStreamInfer` call per
 * request, raw input contents, and `text_output` decoded by hand.
 */
export function grpcJsBareVariant(endpoints: Endpoints): Variant {
  const definition = loadSync('inference/grpc_service.proto', {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    includeDirs: [PROTO_DIR],
  });
  const loaded = loadPackageDefinition(definition) as unknown as {
    inference: { GRPCInferenceService: ServiceClientConstructor };
  };
  const client = new loaded.inference.GRPCInferenceService(
    new URL(endpoints.grpcUrl).host,
    credentials.createInsecure(),
  ) as unknown as InferenceClient;
  return {
    stream(prompt, maxTokens, id, onFirstToken) {
      return new Promise<number>((resolve, reject) => {
        const call = client.ModelStreamInfer();
        let tokens = 0;
        let text = '';
        call.on('data', (message: StreamResponse) => {
          if (message.error_message !== '') {
            call.cancel();
            reject(new Error(message.error_message));
            return;
          }
          const response = message.infer_response;
          if (response == null) return;
          const index = response.outputs.findIndex((o) => o.name === 'text_output');
          const raw = index >= 0 ? response.raw_output_contents[index] : undefined;
          if (raw !== undefined) {
            if (tokens === 0) onFirstToken?.();
            tokens += 1;
            text += firstString(raw);
          }
          if (response.parameters.triton_final_response?.bool_param === true) call.end();
        });
        call.on('error', reject);
        call.on('end', () => {
          if (tokens > 0 && text.length === 0) reject(new Error('tokens counted but no text received'));
          else resolve(tokens);
        });
        call.write({
          model_name: 'ensemble',
          id: String(id),
          parameters: { triton_enable_empty_final_response: { bool_param: true } },
          inputs: ENSEMBLE_INPUTS.map((t) => ({ name: t.name, datatype: t.datatype, shape: [1, 1] })),
          raw_input_contents: [bytesTensor(prompt), int32Tensor(maxTokens), boolTensor(true)],
        });
      });
    },
    close: async () => client.close(),
  };
}
