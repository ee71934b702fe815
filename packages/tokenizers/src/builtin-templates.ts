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

/**
 * ChatML, as Qwen and many fine-tunes use: `<|im_start|>role\ncontent<|im_end|>`. With `tools`, it
 * describes them in the system turn and asks for Hermes-style `<tool_call>{json}</tool_call>`
 * blocks, the convention of Qwen 2.5/3 and Hermes; earlier calls and `tool` results are written
 * back the same way (results as `<tool_response>` blocks in a user turn).
 */
const CHATML = [
  '{% if tools %}',
  '{{ "<|im_start|>system\\n" }}',
  '{% if messages[0].role == "system" %}{{ messages[0].content + "\\n\\n" }}{% endif %}',
  '{{ "# Tools\\n\\nYou may call the functions described, in JSON Schema, inside <tools></tools>:\\n<tools>" }}',
  '{% for tool in tools %}{{ "\\n" + (tool | tojson) }}{% endfor %}',
  '{{ \'\\n</tools>\\n\\nTo call a function, answer with a JSON object of its name and arguments between <tool_call></tool_call> tags:\\n<tool_call>\\n{"name": <function-name>, "arguments": <arguments-object>}\\n</tool_call><|im_end|>\\n\' }}',
  '{% endif %}',
  '{% for message in messages %}',
  '{% if tools and loop.first and message.role == "system" %}',
  '{% elif message.role == "assistant" and message.tool_calls %}',
  '{{ "<|im_start|>assistant" }}{% if message.content %}{{ "\\n" + message.content }}{% endif %}',
  '{% for call in message.tool_calls %}',
  '{{ \'\\n<tool_call>\\n{"name": "\' + call.function.name + \'", "arguments": \' + (call.function.arguments | tojson) + \'}\\n</tool_call>\' }}',
  '{% endfor %}',
  '{{ "<|im_end|>\\n" }}',
  '{% elif message.role == "tool" %}',
  '{% if loop.first or messages[loop.index0 - 1].role != "tool" %}{{ "<|im_start|>user" }}{% endif %}',
  '{{ "\\n<tool_response>\\n" + message.content + "\\n</tool_response>" }}',
  '{% if loop.last or messages[loop.index0 + 1].role != "tool" %}{{ "<|im_end|>\\n" }}{% endif %}',
  '{% else %}',
  '{{ "<|im_start|>" + message.role + "\\n" + message.content + "<|im_end|>\\n" }}',
  '{% endif %}',
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

/**
 * Llama 3 / 3.x: header-delimited turns ending in `<|eot_id|>`. With `tools`, a system turn
 * describes them and asks for Llama 3.1's JSON call format (`{"name": ..., "parameters": ...}`);
 * earlier calls are written back in that format and `tool` results as `ipython` turns, as Llama
 * 3.1 names them.
 */
const LLAMA3 = [
  '{{ bos_token }}',
  '{% if tools %}',
  '{{ "<|start_header_id|>system<|end_header_id|>\\n\\n" }}',
  '{% if messages[0].role == "system" %}{{ (messages[0].content | trim) + "\\n\\n" }}{% endif %}',
  '{{ \'You may call the functions below. To call one, answer with only a JSON object of the form {"name": <function-name>, "parameters": <arguments-object>}; separate several calls with "; ".\\n\\n\' }}',
  '{% for tool in tools %}{% if not loop.first %}{{ "\\n\\n" }}{% endif %}{{ tool | tojson }}{% endfor %}',
  '{{ "<|eot_id|>" }}',
  '{% endif %}',
  '{% for message in messages %}',
  '{% if tools and loop.first and message.role == "system" %}',
  '{% elif message.role == "assistant" and message.tool_calls %}',
  '{{ "<|start_header_id|>assistant<|end_header_id|>\\n\\n" }}',
  '{% for call in message.tool_calls %}{% if not loop.first %}{{ "; " }}{% endif %}',
  '{{ \'{"name": "\' + call.function.name + \'", "parameters": \' + (call.function.arguments | tojson) + \'}\' }}',
  '{% endfor %}',
  '{{ "<|eot_id|>" }}',
  '{% elif message.role == "tool" %}',
  '{{ "<|start_header_id|>ipython<|end_header_id|>\\n\\n" + (message.content | trim) + "<|eot_id|>" }}',
  '{% else %}',
  '{{ "<|start_header_id|>" + message.role + "<|end_header_id|>\\n\\n" + (message.content | trim) + "<|eot_id|>" }}',
  '{% endif %}',
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
