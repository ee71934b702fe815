/** Injected faults on the unary HTTP endpoints (`/generate`, `/infer`), which answer once, at the end. */
import type { Delivery, InferenceRequest, ModelResponse } from '../engine/request.js';
import type { Exchange } from './exchange.js';

/**
 * Plays out the fault, if any, that `req`'s plan puts before response `r` (after `delivered`
 * tokens): a stall waits for the client to leave, a drop destroys the connection, a malformed
 * answer sends `malformedBody()` as a 200 and ends. Resolves to how the send ended, or undefined
 * when no fault fires and the response should be kept.
 */
export async function unaryFault(
  ex: Exchange,
  req: InferenceRequest,
  delivered: number,
  r: ModelResponse,
  malformedBody: () => string,
): Promise<Delivery | undefined> {
  const fault = req.faults.beforeResponse(delivered, r.tokens);
  if (fault === 'stall') {
    await ex.closed;
    return 'cancelled';
  }
  if (fault === 'drop') {
    await ex.destroy();
    return 'cancelled';
  }
  if (fault === 'malformed') {
    if (!ex.gone) {
      ex.res.writeHead(200, { 'Content-Type': 'application/json' });
      ex.res.end(malformedBody());
    }
    return 'failed';
  }
  return undefined;
}
