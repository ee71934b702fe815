/**
 * Chat templates for models whose tokenizer_config.json has none (or when a flag asks for one),
 * written in the Jinja dialect Hugging Face chat templates use. Each names the special tokens it
 * falls back to when the tokenizer config does not give them.
 */
export interface BuiltinTemplate {
  readonly source: string;
  readonly bosToken: string;
  readonly eosToken: string;
}

/** ChatML, as Qwen and many fine-tunes use: `<|im_start|>role\ncontent<|im_end|>`. */
const CHATML = [
  '{% for message in messages %}',
  '{{ "<|im_start|>" + message.role + "\\n" + message.content + "<|im_end|>\\n" }}',
  '{% endfor %}',
  '{% if add_generation_prompt %}{{ "<|im_start|>assistant\\n" }}{% endif %}',
].join('');

/**
 * Llama 2 chat: the system prompt is folded into the first user turn inside `<<SYS>>`, and each
 * user/assistant pair is one `<s>[INST] ... [/INST] ... </s>` block, so turns must alternate.
 */
const LLAMA2 = [
  '{% if messages[0].role == "system" %}',
  '{% set system_prompt = messages[0].content %}{% set turns = messages[1:] %}',
  '{% else %}{% set system_prompt = "" %}{% set turns = messages %}{% endif %}',
  '{% for message in turns %}',
  '{% if (message.role == "user") != (loop.index0 % 2 == 0) %}',
  '{{ raise_exception("messages: Llama 2 needs user and assistant turns to alternate, starting with user") }}',
  '{% endif %}',
  '{% if message.role == "user" %}',
  '{% if loop.first and system_prompt != "" %}',
  '{{ bos_token + "[INST] <<SYS>>\\n" + system_prompt + "\\n<</SYS>>\\n\\n" + (message.content | trim) + " [/INST]" }}',
  '{% else %}{{ bos_token + "[INST] " + (message.content | trim) + " [/INST]" }}{% endif %}',
  '{% else %}{{ " " + (message.content | trim) + " " + eos_token }}{% endif %}',
  '{% endfor %}',
].join('');

/** Llama 3 / 3.x: header-delimited turns ending in `<|eot_id|>`. */
const LLAMA3 = [
  '{{ bos_token }}',
  '{% for message in messages %}',
  '{{ "<|start_header_id|>" + message.role + "<|end_header_id|>\\n\\n" + (message.content | trim) + "<|eot_id|>" }}',
  '{% endfor %}',
  '{% if add_generation_prompt %}{{ "<|start_header_id|>assistant<|end_header_id|>\\n\\n" }}{% endif %}',
].join('');

export const BUILTIN_TEMPLATES = {
  chatml: { source: CHATML, bosToken: '', eosToken: '<|im_end|>' },
  llama2: { source: LLAMA2, bosToken: '<s>', eosToken: '</s>' },
  llama3: { source: LLAMA3, bosToken: '<|begin_of_text|>', eosToken: '<|eot_id|>' },
} as const satisfies Record<string, BuiltinTemplate>;

/** The names of the chat templates shipped with the server. */
export type BuiltinTemplateName = keyof typeof BUILTIN_TEMPLATES;
