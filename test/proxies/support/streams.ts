import { type GenerateRequest, type StreamChunk, type TritonLlm, TritonLlmError } from '@trtllm/sdk';

/** What one stream gave its consumer: the text so far, its request id, and the error that ended it. */
export interface StreamOutcome {
  readonly requestId: string;
  readonly text: string;
  readonly chunks: number;
  readonly finishReason: string | undefined;
  readonly error: TritonLlmError | undefined;
}

/**
 * Reads a stream to its end. `onChunk` sees the count of text chunks so far and may act (abort,
 * stop the proxy). Anything thrown that is not a TritonLlmError fails the test.
 */
export async function readStream(
  llm: TritonLlm,
  request: GenerateRequest,
  options: { signal?: AbortSignal; onChunk?: (chunks: number) => void | Promise<void> } = {},
): Promise<StreamOutcome> {
  const stream = llm.stream(request, options.signal !== undefined ? { signal: options.signal } : {});
  let text = '';
  let chunks = 0;
  let finishReason: string | undefined;
  try {
    for await (const chunk of stream as AsyncIterable<StreamChunk>) {
      if (chunk.done) {
        finishReason = chunk.finishReason;
        continue;
      }
      text += chunk.text;
      chunks++;
      await options.onChunk?.(chunks);
    }
  } catch (err) {
    if (!(err instanceof TritonLlmError)) throw err;
    return { requestId: stream.requestId, text, chunks, finishReason, error: err };
  }
  return { requestId: stream.requestId, text, chunks, finishReason, error: undefined };
}

/** `count` different ensemble requests: distinct prompts and lengths, so a mixed-up stream shows. */
export function requests(count: number, maxTokens: (i: number) => number): GenerateRequest[] {
  return Array.from({ length: count }, (_, i) => ({
    prompt: `Question ${i}: what is machine learning?`,
    maxTokens: maxTokens(i),
  }));
}

/** How many streams failed with each code and message: `{}` when none did. */
export function errorTally(outcomes: readonly StreamOutcome[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const { error } of outcomes) {
    if (error === undefined) continue;
    const key = `${error.code}: ${error.message}`;
    tally[key] = (tally[key] ?? 0) + 1;
  }
  return tally;
}

/** Streams in flight, and when each of them is known to be mid-way. */
export interface StreamsInFlight {
  /** Resolves once every stream has delivered `midwayChunks` chunks (or ended before that). */
  readonly midway: Promise<void>;
  /** How many streams have ended so far. */
  readonly ended: () => number;
  readonly outcomes: Promise<StreamOutcome[]>;
}

/** Starts one stream per request on `llm`; `midway` tells when all of them are past `midwayChunks` chunks. */
export function startStreams(
  llm: TritonLlm,
  batch: readonly GenerateRequest[],
  midwayChunks: number,
): StreamsInFlight {
  let reached = 0;
  let ended = 0;
  let arrived: () => void = () => undefined;
  const midway = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const reach = () => {
    if (++reached === batch.length) arrived();
  };
  const outcomes = Promise.all(
    batch.map(async (request) => {
      let counted = false;
      const outcome = await readStream(llm, request, {
        onChunk: (n) => {
          if (n !== midwayChunks) return;
          counted = true;
          reach();
        },
      });
      ended++;
      if (!counted) reach();
      return outcome;
    }),
  );
  return { midway, ended: () => ended, outcomes };
}
