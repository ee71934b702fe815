// The Node socket engine: HTTP/1.1 on keep-alive `node:net`/`node:tls` connections. It speaks bytes
// and headers and raises the engine's own errors (`MalformedResponse`); nothing here knows of
// events, Triton or core.
export { nodeEngine } from './engine.js';
