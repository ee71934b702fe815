// The fetch engine: any runtime's `fetch`, the body read as a web stream. It speaks bytes and
// headers only; the runtime's network errors pass through as they are.
export { type Fetch, fetchEngine } from './engine.js';
