import type { InferRequest, InferResponse } from '@trtllm/sdk';
import type { CallOptions } from '@trtllm/sdk/transport';
import { errorField, type HttpClient, jsonOf, type Send } from '../call/index.js';
import { type ErrorContext, errorFromHttp } from '../errors.js';
import { generateRequestJson } from './generate-request.js';
import { generateResponse } from './generate-response.js';
import { inferRequestBody } from './infer-request.js';
import { inferResponse } from './infer-response.js';
import { modelPath } from './paths.js';

/** A unary call: Triton's `/generate` when the request asks for it, else KServe `/infer`. */
export async function infer(
  client: HttpClient,
  request: InferRequest,
  options: CallOptions | undefined,
): Promise<InferResponse> {
  const generate = request.endpoint === 'generate';
  const path = `${modelPath(request.model, request.modelVersion)}/${generate ? 'generate' : 'infer'}`;
  const context: ErrorContext = { what: `POST ${path}`, requestId: request.id, model: request.model };
  // Encoded before the call starts: bad input fails without opening a connection.
  const send = generate ? generateSend(path, request) : inferSend(path, request);
  const call = client.begin(options, context);
  try {
    const answer = await client.ok(call, send, options);
    if (generate) {
      const body = jsonOf(answer.body, context);
      // Triton answers /generate on a decoupled model with 200 and an error body.
      const error = errorField(body);
      if (error !== undefined) throw errorFromHttp(answer.status, JSON.stringify({ error }), context);
      return generateResponse(body, request, true, context);
    }
    const headerLength = answer.headers.get('inference-header-content-length');
    return inferResponse(
      answer.body,
      headerLength == null ? undefined : Number(headerLength),
      request,
      context,
    );
  } finally {
    call.finish();
  }
}

function generateSend(path: string, request: InferRequest): Send {
  return {
    method: 'POST',
    path,
    body: generateRequestJson(request),
    headers: [['content-type', 'application/json']],
  };
}

function inferSend(path: string, request: InferRequest): Send {
  const { bytes, headerLength } = inferRequestBody(request);
  return {
    method: 'POST',
    path,
    body: bytes,
    headers: [
      ['content-type', 'application/octet-stream'],
      ['inference-header-content-length', String(headerLength)],
    ],
  };
}
