import type { H2Engine, H2EngineName, H2EngineOptions } from './engine.js';
import { NodeH2Sessions } from './node-http2.js';
import { H2Sessions } from './sessions.js';

/** The engine `name` stands for, connecting as `options` say (connections open on first use). */
export function createEngine(name: H2EngineName, options: H2EngineOptions): H2Engine {
  return name === 'node-http2' ? new NodeH2Sessions(options) : new H2Sessions(options);
}
