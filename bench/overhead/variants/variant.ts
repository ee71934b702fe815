/** Where the fake server listens. */
export interface Endpoints {
  readonly grpcUrl: string;
  readonly httpUrl: string;
}

/**
 * One client under test. Every variant sends the same request to the `ensemble` model (prompt,
 * `max_tokens`, `stream: true`), decodes each streamed `text_output` into a string, and ends the
 * request on its final response.
 */
export interface Variant {
  /** Streams one request to its end and resolves to the tokens received; `onFirstToken` fires at the first. */
  stream(prompt: string, maxTokens: number, id: number, onFirstToken?: () => void): Promise<number>;
  close(): Promise<void>;
}
