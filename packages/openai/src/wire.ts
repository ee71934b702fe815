/**
 * The OpenAI wire shapes this server writes, in OpenAI's own snake_case names. Only the fields the
 * server fills are declared; clients ignore what they do not know.
 */

export type OpenAiFinishReason = 'stop' | 'length';

/** Chat adds `tool_calls`: the model stopped to have functions called. */
export type OpenAiChatFinishReason = OpenAiFinishReason | 'tool_calls';

/** One function call in an assistant message. */
export interface OpenAiToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

export interface OpenAiUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** Legacy completions log probs: parallel arrays, one entry per generated token. */
export interface CompletionLogProbs {
  readonly tokens: string[];
  readonly token_logprobs: number[];
  readonly top_logprobs: Record<string, number>[];
  readonly text_offset: number[];
}

export interface ChatTokenLogProb {
  readonly token: string;
  readonly logprob: number;
  readonly bytes: number[];
  readonly top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

export interface ChatLogProbs {
  readonly content: ChatTokenLogProb[];
  readonly refusal: null;
}

export interface OpenAiErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: string;
    readonly param: string | null;
    readonly code: string | null;
  };
}
