/** Unary `ModelInfer`: non-decoupled models only, as on the real server. */
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { admit } from '../engine/admit.js';
import type { EngineContext } from '../engine/context.js';
import { execute } from '../engine/execute.js';
import type { Delivery, InferenceRequest, ModelResponse } from '../engine/request.js';
import { asTritonError, grpcStatusOf, type TritonError } from '../errors.js';
import { MODEL_VERSION } from '../models/repository.js';
import { encodeInferResponse, MALFORMED_MESSAGE } from './encode.js';
import { decodeInputs, inputHeaders, type ProtoInferRequest, requestParameters } from './request.js';
import type { DropConnection } from './stream.js';

export const DECOUPLED_MODEL_INFER = "ModelInfer RPC doesn't support models with decoupled transaction policy";

export function handleModelInfer(
  call: ServerUnaryCall<ProtoInferRequest, Buffer>,
  callback: sendUnaryData<Buffer>,
  ctx: EngineContext,
  drop: DropConnection,
): void {
  const msg = call.request;
  let answered = false;
  const answer = (error: TritonError | undefined, bytes?: Buffer) => {
    if (answered) return;
    answered = true;
    if (error) callback({ code: grpcStatusOf(error), details: error.message });
    else callback(null, bytes);
  };
  let req: InferenceRequest;
  const outputs = (msg.outputs ?? []).map((o) => o.name);
  try {
    req = admit(ctx, {
      protocol: 'grpc',
      modelName: msg.model_name,
      modelVersion: msg.model_version,
      id: msg.id,
      headers: inputHeaders(msg),
      decode: (model) => decodeInputs(msg, model.name),
      parameters: requestParameters(msg),
      outputs,
      refuseDecoupled: DECOUPLED_MODEL_INFER,
    });
  } catch (err) {
    return answer(asTritonError(err));
  }
  const abort = new AbortController();
  call.on('cancelled', () => abort.abort());
  let response: Buffer | undefined;
  let delivered = 0;
  void execute(
    req,
    {
      signal: abort.signal,
      async send(r: ModelResponse): Promise<Delivery> {
        if (abort.signal.aborted || answered) return 'cancelled';
        switch (req.faults.beforeResponse(delivered, r.tokens)) {
          case 'stall':
            await new Promise((resolve) => abort.signal.addEventListener('abort', resolve, { once: true }));
            return 'cancelled';
          case 'drop':
            drop(call);
            return 'cancelled';
          case 'malformed':
            answer(undefined, MALFORMED_MESSAGE);
            return 'failed';
          default:
            break;
        }
        delivered += r.tokens;
        response = encodeInferResponse({
          model: req.model.name,
          version: MODEL_VERSION,
          id: req.id,
          outputs: r.outputs,
          final: undefined,
        });
        return 'ok';
      },
      complete: () => answer(undefined, response ?? encodeInferResponse({ model: req.model.name, version: MODEL_VERSION, id: req.id, outputs: [], final: undefined })),
      fail: (error) => answer(error),
    },
    ctx,
    outputs,
  );
}
