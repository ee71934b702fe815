// The call layer: messages over whichever engine carries them. One call's signal, deadline and
// failures (`Call`); the transport's shared state and its unary calls, read whole (`HttpClient`,
// `unary.ts`); and the one event-stream reader (`EventStream`: SSE, Triton's error events and
// error bodies, the final response, the size limit) that every engine's streams go through.
// Nothing here knows core's tensors: the transport maps messages to them.
export { jsonOf } from './body.js';
export { type EngineFactory, HttpClient, type Send } from './client.js';
export { EventStream } from './event-stream.js';
export {
  errorField,
  type JsonStrings,
  type StreamIdentity,
  type StreamMessages,
} from './stream-messages.js';
