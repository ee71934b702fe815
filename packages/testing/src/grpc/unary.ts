/** Unary `ModelInfer`: non-decoupled models only, as on the real server. */
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { findTarget, prepareRequest } from '../engine/admit.js';
import type { EngineContext } from '../engine/context.js';
import { execute } from '../engine/execute.js';
import type { Delivery, InferenceRequest, ModelResponse } from '../engine/request.js';
import { asTritonError, grpcStatusOf, type TritonError } from '../errors.js';
import { MODEL_VERSION } from '../models/repository.js';
import { withTraceparent } from '../trace-context.js';
import { MALFORMED_MESSAGE, ResponseEncoder } from './encode.js';
import { decodeInputs, inputHeaders, type ProtoInferRequest, requestParameters } from './request.js';
import type { DropConnection } from './stream.js';

export const DECOUPLED_MODEL_INFER =
  "ModelInfer RPC doesn't support models with decoupled transaction policy";

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
    req = prepareRequest(findTarget(ctx, msg.model_name, msg.model_version, DECOUPLED_MODEL_INFER), {
      protocol: 'grpc',
      id: msg.id,
      headers: inputHeaders(msg),
      decode: () => decodeInputs(msg, msg.model_name),
      parameters: requestParameters(msg),
      outputs,
    });
  } catch (err) {
    answer(asTritonError(err));
    return;
  }
  const abort = new AbortController();
  call.on('cancelled', () => abort.abort());
  const encoder = new ResponseEncoder(req.model.name, MODEL_VERSION, req.id);
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
            await drop(call);
            return 'cancelled';
          case 'malformed':
            answer(undefined, MALFORMED_MESSAGE);
            return 'failed';
          default:
            break;
        }
        delivered += r.tokens;
        response = encoder.response(r.outputs, undefined);
        return 'ok';
      },
      complete: () => answer(undefined, response ?? encoder.response([], undefined)),
      fail: (error) => answer(error),
    },
    withTraceparent(ctx, call.metadata.get('traceparent')[0]),
    outputs,
  );
}
