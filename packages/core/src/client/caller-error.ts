import { TritonLlmError } from '../errors.js';

/**
 * The steps the SDK and its transports put before a reason (`schema on 'x' failed: `,
 * `ModelConfig 'x' failed: `, `ModelConfig 'x': `, `GET /v2/models/x/config: `): calls the user of a
 * front end (the AI SDK provider, LangChain's chat model) never made, so their message leads with
 * their own call instead.
 */
const STEP =
  /^(?:(?:Model|Server|Repository)[A-Za-z]* '[^']*'(?: failed)?: |(?:GET|POST) \/\S*(?: failed(?: with HTTP \d+)?)?: )/;

/** A hint naming an SDK function that a caller configured by URL does not use. */
const TRANSPORT_HINT = /;? ?use (?:http|grpc)Transport for (?:HTTP|gRPC)/g;

/** The setting of a caller configured by URL for an address that speaks the other protocol. */
const SETTING_FOR = { grpc: 'grpcUrl', http: 'httpUrl' } as const;

/**
 * `err` as a front end's user meets it: `<call> on 'ensemble' failed: <reason>` (`streamText`,
 * `ChatTriton.invoke`), the hint naming `grpcUrl` / `httpUrl` when the front end was configured by
 * URL, the SDK's own error (with its internal steps) kept as `cause`. Errors about an input
 * (`field`) already lead with the input and pass unchanged, as do errors that are not the SDK's.
 */
export function callerError(err: unknown, call: string, model: string, byUrl: boolean): unknown {
  if (!(err instanceof TritonLlmError) || err.field !== undefined) return err;
  let reason = err.message;
  // The SDK call the front end made (`schema`, `generate`, `stream`) leads the SDK's message.
  if (err.operation !== undefined) {
    const on = err.model !== undefined ? ` on '${err.model}'` : '';
    const lead = `${err.operation}${on} failed: `;
    if (reason.startsWith(lead)) reason = reason.slice(lead.length);
  }
  for (let prefix = STEP.exec(reason); prefix !== null; prefix = STEP.exec(reason)) {
    reason = reason.slice(prefix[0].length);
  }
  // The address speaks the other protocol: the hint names the caller's setting for it.
  const speaks = err.endpointProtocol;
  if (byUrl && speaks !== undefined) {
    const protocol = speaks === 'grpc' ? 'gRPC' : 'HTTP';
    reason = `${reason.replace(TRANSPORT_HINT, '')}; the address speaks ${protocol}: give it as ${SETTING_FOR[speaks]}`;
  }
  const message = `${call} on '${err.model ?? model}' failed: ${reason}`;
  return new TritonLlmError(err.code, message, {
    retryable: err.retryable,
    ...(err.serverMessage !== undefined ? { serverMessage: err.serverMessage } : {}),
    ...(err.requestId !== undefined ? { requestId: err.requestId } : {}),
    model: err.model ?? model,
    ...(err.httpStatus !== undefined ? { httpStatus: err.httpStatus } : {}),
    ...(err.grpcStatus !== undefined ? { grpcStatus: err.grpcStatus } : {}),
    ...(err.earlyStop !== undefined ? { earlyStop: err.earlyStop } : {}),
    ...(speaks !== undefined ? { endpointProtocol: speaks } : {}),
    operation: call,
    cause: err,
  });
}
