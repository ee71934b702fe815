import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import { BUILTIN_TEMPLATES, type BuiltinTemplateName } from './builtin-templates.js';

/**
 * Which chat template to use: the model's own (`auto`, falling back to ChatML) or a built-in one
 * (`chatml`, `llama2`, `llama3`; {@link CHAT_TEMPLATE_CHOICES} lists them all).
 */
export type ChatTemplateChoice = 'auto' | BuiltinTemplateName;

/** Every accepted {@link ChatTemplateChoice}, for CLI help and for validating user input. */
export const CHAT_TEMPLATE_CHOICES: readonly ChatTemplateChoice[] = ['auto', 'chatml', 'llama2', 'llama3'];

/**
 * One chat message after its content parts were joined into text. An assistant turn that called
 * tools carries `toolCalls`; the `tool` turn that answers one names it in `toolCallId`. A message
 * with images keeps the order of its text and images in `parts`, so that a template with image
 * markers can place them.
 */
export interface ChatMessage {
  readonly role: string;
  readonly content: string;
  /** The content in order, with where each image was; the images themselves travel beside the prompt. */
  readonly parts?: readonly ChatContentPart[];
  readonly name?: string;
  readonly toolCalls?: readonly ChatToolCall[];
  readonly toolCallId?: string;
}

/**
 * A piece of a message's content: text, or the place of one image (sent to the model beside the
 * prompt, as the request's `images`).
 */
export type ChatContentPart = { readonly type: 'text'; readonly text: string } | { readonly type: 'image' };

/** A function call the assistant made in an earlier turn; `arguments` is JSON text, as OpenAI sends it. */
export interface ChatToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** A function the model may call, described as OpenAI and Hugging Face templates describe one (JSON Schema parameters). */
export interface ChatTool {
  readonly name: string;
  readonly description?: string;
  readonly parameters?: Readonly<Record<string, unknown>>;
}

/** What {@link ChatTemplate.render} takes besides the messages. */
export interface RenderOptions {
  /** Functions offered to the model, given to the template as its `tools` variable. */
  readonly tools?: readonly ChatTool[];
}

/**
 * A compiled chat template and the special tokens it may print. `source` says where it came
 * from: `model` (the tokenizer config) or a built-in name.
 */
export class ChatTemplate {
  private readonly template: Template;
  /**
   * Whether the template reads a `tools` variable at all: one that does not would drop the
   * functions silently, so callers refuse tools for it instead.
   */
  readonly rendersTools: boolean;
  /**
   * Whether the template places image markers: it compares a content part's type with 'image', as
   * the templates of Hugging Face vision models do (`{% if content['type'] == 'image' %}`). Such a
   * template is given a message's `parts` as its content list; any other renders the text alone.
   */
  readonly rendersImages: boolean;

  constructor(
    readonly source: 'model' | BuiltinTemplateName,
    /** The Jinja text, which tool-call parsers inspect to recognise the model's call format. */
    readonly text: string,
    private readonly specials: { readonly bosToken: string; readonly eosToken: string },
  ) {
    this.rendersTools = /\btools\b/.test(text);
    this.rendersImages = /['"]image['"]/.test(text);
    try {
      this.template = new Template(text);
    } catch (err) {
      throw new TritonLlmError(
        'invalid_argument',
        `chat template (${source}) does not parse: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  }

  /**
   * The prompt for `messages`, ending where the assistant's reply begins. Messages reach the
   * template in Hugging Face's shape (`tool_calls` with `function.arguments` as an object,
   * `tool_call_id`), and `options.tools` as `tools`, the way Hugging Face templates expect them.
   */
  render(messages: readonly ChatMessage[], options: RenderOptions = {}): string {
    const tools = options.tools ?? [];
    try {
      return this.template.render({
        messages: messages.map((m) => templateMessage(m, this.rendersImages)),
        ...(tools.length > 0 ? { tools: tools.map(templateTool) } : {}),
        add_generation_prompt: true,
        bos_token: this.specials.bosToken,
        eos_token: this.specials.eosToken,
      });
    } catch (err) {
      // A template refuses conversations it cannot express (roles out of order, unknown roles): the caller's input.
      throw new TritonLlmError(
        'invalid_argument',
        `messages: the chat template (${this.source}) refused them: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
}

/**
 * A message as Hugging Face templates read it: snake_case fields, call arguments as an object, and
 * for a template with image markers, content with images as a list of `{ type: 'text', text }` and
 * `{ type: 'image' }` parts (the shape Hugging Face processors give such templates).
 */
function templateMessage(m: ChatMessage, images: boolean): Record<string, unknown> {
  const parts = images && m.parts?.some((p) => p.type === 'image') ? m.parts : undefined;
  return {
    role: m.role,
    content: parts !== undefined ? parts.map((p) => ({ ...p })) : m.content,
    ...(m.name !== undefined ? { name: m.name } : {}),
    ...(m.toolCalls !== undefined && m.toolCalls.length > 0
      ? {
          tool_calls: m.toolCalls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: argumentsValue(c.arguments) },
          })),
        }
      : {}),
    ...(m.toolCallId !== undefined ? { tool_call_id: m.toolCallId } : {}),
  };
}

/**
 * Templates print arguments with `tojson`, so they need the parsed object; text that is not a JSON
 * object stays text rather than failing the whole conversation.
 */
function argumentsValue(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : text;
  } catch {
    return text;
  }
}

function templateTool(t: ChatTool): Record<string, unknown> {
  return {
    type: 'function',
    function: {
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      ...(t.parameters !== undefined ? { parameters: t.parameters } : {}),
    },
  };
}

/** What `tokenizer_config.json` says about chat formatting. */
interface TokenizerConfigChat {
  readonly template?: string;
  readonly bosToken?: string;
  readonly eosToken?: string;
}

/**
 * Loads the chat template: with `auto`, the model's own from `tokenizerDir` (its
 * tokenizer_config.json `chat_template`, or a `chat_template.jinja` beside it), else ChatML; with
 * a built-in name, that template with the special tokens of `tokenizerDir` where it has them.
 */
export async function loadChatTemplate(options: {
  readonly choice?: ChatTemplateChoice;
  readonly tokenizerDir?: string;
}): Promise<ChatTemplate> {
  const choice = options.choice ?? 'auto';
  if (!CHAT_TEMPLATE_CHOICES.includes(choice)) {
    throw invalidArgument('chatTemplate', choice, `must be one of ${CHAT_TEMPLATE_CHOICES.join(', ')}`);
  }
  const config = options.tokenizerDir !== undefined ? await readTokenizerConfig(options.tokenizerDir) : {};
  if (choice === 'auto' && config.template !== undefined) {
    return new ChatTemplate('model', config.template, {
      bosToken: config.bosToken ?? '',
      eosToken: config.eosToken ?? '',
    });
  }
  const name: BuiltinTemplateName = choice === 'auto' ? 'chatml' : choice;
  const builtin = BUILTIN_TEMPLATES[name];
  return new ChatTemplate(name, builtin.source, {
    bosToken: config.bosToken ?? builtin.bosToken,
    eosToken: config.eosToken ?? builtin.eosToken,
  });
}

async function readTokenizerConfig(dir: string): Promise<TokenizerConfigChat> {
  const path = join(dir, 'tokenizer_config.json');
  const raw = await readOptional(path);
  if (raw === undefined) {
    const template = await readOptional(join(dir, 'chat_template.jinja'));
    if (template === undefined) {
      throw new TritonLlmError(
        'not_found',
        `tokenizerDir: neither ${path} nor chat_template.jinja exists in ${dir}`,
      );
    }
    return { template };
  }
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(raw) as Record<string, unknown>;
  } catch (err) {
    throw new TritonLlmError('invalid_argument', `${path} is not valid JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const template = templateOf(json.chat_template) ?? (await readOptional(join(dir, 'chat_template.jinja')));
  const bosToken = tokenText(json.bos_token);
  const eosToken = tokenText(json.eos_token);
  return {
    ...(template !== undefined ? { template } : {}),
    ...(bosToken !== undefined ? { bosToken } : {}),
    ...(eosToken !== undefined ? { eosToken } : {}),
  };
}

/** `chat_template` is a string, or a list of named templates of which `default` is the chat one. */
function templateOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return undefined;
  const named = value as { name?: unknown; template?: unknown }[];
  const pick = named.find((t) => t.name === 'default') ?? named[0];
  return typeof pick?.template === 'string' ? pick.template : undefined;
}

/** Special tokens are strings or `{ "content": "<s>", ... }` objects (AddedToken). */
function tokenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { content?: unknown }).content === 'string'
  ) {
    return (value as { content: string }).content;
  }
  return undefined;
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new TritonLlmError('not_found', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}
