import { type TritonLlm, TritonLlmError } from '@trtllm/sdk';

/**
 * How the user gives this server the raw model's tokenizer, as messages name it: the CLI's
 * `--tokenizer-dir`, or `createOpenAiServer`'s `tokenizer`.
 */
export interface TokenizerSetting {
  /** The setting, kept as the error's `field`. */
  readonly name: string;
  /** What to do, in the user's settings (`give --tokenizer-dir <...>`). */
  readonly fix: string;
}

/** The CLI's words: `given` is the `--tokenizer-dir` the user passed, if any. */
export function cliTokenizerSetting(given: string | undefined): TokenizerSetting {
  return {
    name: '--tokenizer-dir',
    fix:
      given === undefined
        ? "give --tokenizer-dir <the model's Hugging Face tokenizer directory, with its tokenizer.json>"
        : `--tokenizer-dir ${given} has no tokenizer.json (only a chat template); give the directory with the model's tokenizer.json`,
  };
}

/** The library's words, for the backend `createOpenAiServer` was given. */
export function libraryTokenizerSetting(
  backend: 'llm' | 'transport',
  tokenizerDir: boolean,
): TokenizerSetting {
  if (backend === 'llm') {
    return {
      name: 'llm',
      fix: 'create the TritonLlm given to createOpenAiServer as llm with a tokenizer (new TritonLlm({ ..., tokenizer }))',
    };
  }
  return {
    name: 'tokenizer',
    fix:
      'give createOpenAiServer a tokenizer (tokenizer: await loadTokenizerDir(dir) of @trtllm/tokenizers)' +
      (tokenizerDir ? '; tokenizerDir alone gives the chat template only' : ''),
  };
}

/** Why the raw model cannot serve text here, led by `lead` (`model 'x' on Triton at ...`). */
function reason(lead: string, setting: TokenizerSetting): string {
  return (
    `${lead} is the raw tensorrt_llm model, which takes and returns token ids, and this server has ` +
    `no tokenizer to turn text into them: ${setting.fix}`
  );
}

/**
 * The start-up refusal of the raw model without a tokenizer (issue 53): without this check the
 * server starts and then answers every text request with an error.
 */
export function rawModelNeedsTokenizer(
  model: string,
  where: string,
  setting: TokenizerSetting,
): TritonLlmError {
  return new TritonLlmError('failed_precondition', reason(`model '${model}' on ${where}`, setting), {
    model,
    field: setting.name,
  });
}

// The options core encodes with the tokenizer on the raw model; its refusal names one of them.
const TEXT_OPTIONS: ReadonlySet<string | undefined> = new Set(['prompt', 'stopWords', 'badWords']);

/**
 * Core's refusal of text on the raw model without a tokenizer (`create TritonLlm with a
 * tokenizer`, an SDK step) in this server's settings, led by the client's request; any other
 * error unchanged. For a server that was not checked with `ready()` first.
 */
export async function inTokenizerTerms(
  err: unknown,
  llm: TritonLlm,
  setting: TokenizerSetting,
  request: string,
): Promise<unknown> {
  if (
    !(err instanceof TritonLlmError) ||
    err.code !== 'invalid_argument' ||
    !TEXT_OPTIONS.has(err.field) ||
    err.model !== llm.model
  ) {
    return err;
  }
  // The model's config was read before the request was encoded, so this is the cached schema.
  const schema = await llm.schema().catch(() => undefined);
  if (schema?.flavor !== 'tensorrt_llm') return err;
  return new TritonLlmError(
    'failed_precondition',
    `${request} failed: ${reason(`model '${llm.model}'`, setting)}`,
    {
      model: llm.model,
      field: setting.name,
      cause: err,
    },
  );
}
