/** Ending a request: the same rules for every model kind. */
import type { TritonError } from '../errors.js';
import type { EngineContext } from './context.js';
import type { InferenceRequest, ResponseSink } from './request.js';

/** A model refusing a request it received: logged as received then error, and sent to the client. */
export function refuse(
  req: InferenceRequest,
  sink: ResponseSink,
  ctx: EngineContext,
  error: TritonError,
  guide?: string,
): void {
  const base = { model: req.model.name, id: req.id, tokens: 0, protocol: req.protocol } as const;
  ctx.events.record({ ...base, event: 'received', ...(guide !== undefined ? { guide } : {}) });
  ctx.events.record({ ...base, event: 'error' });
  sink.fail(error);
}

/**
 * Answers a request that produces no data (an in-band stop): decoupled models just end it (the
 * client sees the empty final response), others owe exactly one response.
 */
export async function answerEmpty(req: InferenceRequest, sink: ResponseSink): Promise<void> {
  if (!req.model.decoupled) {
    const delivery = await sink.send({ outputs: [], tokens: 0, final: true });
    if (delivery !== 'ok') return;
  }
  sink.complete();
}
