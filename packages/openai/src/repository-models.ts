import { type Tokenizer, type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';

/** What {@link listServableModels} found: the models a server can serve, and why the others cannot be. */
export interface ServableModels {
  /** Ready models the SDK can drive, in the repository's order. */
  readonly models: readonly string[];
  /** The repository's other models, each with the reason (not ready, not a text-generation model, no tokenizer). */
  readonly skipped: readonly { readonly model: string; readonly reason: string }[];
}

/**
 * Every model of Triton's repository that an OpenAI server can serve (`trtllm-openai --model all`,
 * or `createOpenAiServer({ transport, models })` built from it): ready, and of a flavor the SDK
 * drives (ensemble, BLS, LLM API, the raw model given a `tokenizer`); preprocessing,
 * postprocessing and other models are skipped with the reason. Needs a transport that lists the
 * repository (both of this project's do).
 */
export async function listServableModels(
  transport: Transport,
  options: { readonly tokenizer?: Tokenizer; readonly signal?: AbortSignal } = {},
): Promise<ServableModels> {
  if (transport.repositoryIndex === undefined) {
    throw new TritonLlmError(
      'unimplemented',
      'this transport does not list the model repository; name the models to serve instead',
    );
  }
  const call = options.signal !== undefined ? { signal: options.signal } : {};
  const index = await transport.repositoryIndex(call);
  const models: string[] = [];
  const skipped: { model: string; reason: string }[] = [];
  for (const entry of index) {
    if (entry.state !== 'READY') {
      skipped.push({ model: entry.name, reason: `not ready (${entry.state || 'no state'})` });
      continue;
    }
    // Not closed: closing a client closes the transport it shares with the server.
    const llm = new TritonLlm({ transport, model: entry.name });
    try {
      const schema = await llm.schema(call);
      if (schema.flavor === 'tensorrt_llm' && options.tokenizer === undefined) {
        skipped.push({ model: entry.name, reason: 'the raw tensorrt_llm model needs a tokenizer' });
        continue;
      }
      models.push(entry.name);
    } catch (err) {
      if (options.signal?.aborted === true) throw err;
      const e = TritonLlmError.from(err, 'internal');
      if (e.code === 'unavailable' || e.code === 'deadline_exceeded') throw e;
      skipped.push({ model: entry.name, reason: 'not a text-generation model the SDK drives' });
    }
  }
  return { models, skipped };
}
