let nextId = Math.floor(Math.random() * 1_000_000_000);

/** Numeric ids: the TRT-LLM stop path historically required a numeric request id. */
export function generateRequestId(): string {
  nextId = (nextId + 1) % Number.MAX_SAFE_INTEGER;
  return String(nextId);
}
