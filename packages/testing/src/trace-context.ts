/** Records the client's W3C trace context on the event log, as Triton's tracing would join it. */
import type { EngineContext } from './engine/context.js';
import type { EventLog } from './engine/event-log.js';

/**
 * The engine context for one request: its `received` events (and those of the models it calls)
 * carry the `traceparent` the client sent. Without one, the context is returned as it is.
 */
export function withTraceparent(ctx: EngineContext, traceparent: unknown): EngineContext {
  if (typeof traceparent !== 'string' || traceparent === '') return ctx;
  const { events } = ctx;
  const record: EventLog['record'] = (event) =>
    events.record(event.event === 'received' ? { ...event, traceparent } : event);
  const traced = new Proxy(events, {
    get: (target, key) => (key === 'record' ? record : Reflect.get(target, key, target)),
  });
  return { ...ctx, events: traced };
}
