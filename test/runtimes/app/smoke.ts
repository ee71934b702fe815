// The smoke run every runtime executes (Bun, Deno, a Cloudflare Worker) and the test repeats on Node
// for the reference: one short stream read to its end, then a long one aborted after a few chunks.
// It imports the packages by name only, so each runtime resolves them as a user's project would.
import { type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';

/** What one transport did in one runtime: JSON, so a child process can print it. */
export interface SmokeReport {
  readonly transport: string;
  readonly text: string;
  readonly deltas: number;
  readonly finishReason: string;
  /** What the SDK's logger received (the advisory that the BLS model keeps generating after a cancel). */
  readonly warnings: readonly string[];
  readonly abort: {
    readonly requestId: string;
    readonly tokensBeforeAbort: number;
    readonly finishReason?: string;
    readonly earlyStop?: {
      readonly trigger: string;
      readonly via: readonly string[];
      readonly serverTold: boolean;
    };
    readonly errorCode?: string;
  };
}

// `tensorrt_llm_bls` streams exact text (accumulated on the server, deltas made by the client), so
// the text can be compared byte for byte with Node's.
const MODEL = 'tensorrt_llm_bls';
export const SMOKE_PROMPT = 'Where does this SDK run?';
export const SMOKE_MAX_TOKENS = 12;
/** Far more tokens than the fake sends before the abort lands, so an ignored abort shows. */
export const ABORT_MAX_TOKENS = 500;
export const ABORT_AFTER_DELTAS = 3;

export async function smoke(name: string, transport: Transport, abortId: string): Promise<SmokeReport> {
  const warnings: string[] = [];
  const llm = new TritonLlm({
    transport,
    model: MODEL,
    logger: { warn: (message) => warnings.push(message) },
  });
  let text = '';
  let deltas = 0;
  let finishReason = '';
  for await (const chunk of llm.stream({ prompt: SMOKE_PROMPT, maxTokens: SMOKE_MAX_TOKENS })) {
    if (chunk.done) finishReason = chunk.finishReason;
    else {
      text += chunk.text;
      deltas += 1;
    }
  }

  const controller = new AbortController();
  let tokensBeforeAbort = 0;
  let seen = 0;
  let abort: SmokeReport['abort'] = { requestId: abortId, tokensBeforeAbort };
  try {
    const running = llm.stream(
      { prompt: SMOKE_PROMPT, maxTokens: ABORT_MAX_TOKENS, requestId: abortId },
      { signal: controller.signal },
    );
    for await (const chunk of running) {
      if (chunk.done) {
        const early = chunk.result.earlyStop;
        abort = {
          ...abort,
          tokensBeforeAbort,
          finishReason: chunk.finishReason,
          ...(early !== undefined
            ? { earlyStop: { trigger: early.trigger, via: early.via, serverTold: early.serverTold } }
            : {}),
        };
      } else {
        tokensBeforeAbort = chunk.totalTokens;
        seen += 1;
        if (seen === ABORT_AFTER_DELTAS) controller.abort();
      }
    }
  } catch (err) {
    abort = {
      ...abort,
      tokensBeforeAbort,
      errorCode: err instanceof TritonLlmError ? err.code : `not a TritonLlmError: ${String(err)}`,
    };
  }
  return { transport: name, text, deltas, finishReason, warnings, abort };
}
