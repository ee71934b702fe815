import { readFile } from 'node:fs/promises';
import { CHAT_TEMPLATE_CHOICES, type ChatTemplateChoice } from '@trtllm/tokenizers';
import type { LoraAdapterOptions } from './served-models.js';

/** An adapter as the CLI reads it: the library's options, with the C++ model's weights still a directory. */
export type CliAdapter = LoraAdapterOptions & { readonly dir?: string };

/** One model as the CLI serves it: the library's options, with the tokenizer still a directory. */
export interface CliModel {
  readonly model: string;
  readonly name?: string;
  readonly tokenizerDir?: string;
  readonly chatTemplate?: ChatTemplateChoice;
  readonly adapters?: readonly CliAdapter[];
}

/** What the model flags ask for: named models, or every servable model of the repository. */
export type CliModels =
  | { readonly all: true }
  | { readonly all: false; readonly models: readonly CliModel[] };

/** A usage error: the CLI prints it with the usage and exits 2. */
export class UsageError extends Error {}

const MODEL_KEYS = ['model', 'name', 'tokenizer-dir', 'chat-template'] as const;
const LORA_KEYS = ['name', 'base', 'task-id', 'lora-name', 'path', 'ckpt-source', 'dir'] as const;

/** `first,key=value,...` as its keys; a first part without `=` is the value of `lead`. */
function keyValues(flag: string, text: string, lead: string, keys: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  text.split(',').forEach((part, i) => {
    const eq = part.indexOf('=');
    const [key, value] = eq < 0 && i === 0 ? [lead, part] : [part.slice(0, eq), part.slice(eq + 1)];
    if (eq < 0 && i > 0) throw new UsageError(`${flag} ${text}: "${part}" is not key=value`);
    if (!keys.includes(key))
      throw new UsageError(`${flag} ${text}: unknown key "${key}" (keys: ${keys.join(', ')})`);
    if (value.length === 0) throw new UsageError(`${flag} ${text}: ${key} is empty`);
    if (out.has(key)) throw new UsageError(`${flag} ${text}: ${key} is given twice`);
    out.set(key, value);
  });
  return out;
}

function templateChoice(flag: string, value: string | undefined): ChatTemplateChoice | undefined {
  if (value === undefined) return undefined;
  if (!(CHAT_TEMPLATE_CHOICES as readonly string[]).includes(value))
    throw new UsageError(
      `${flag}: chat-template must be one of ${CHAT_TEMPLATE_CHOICES.join(', ')} (got "${value}")`,
    );
  return value as ChatTemplateChoice;
}

/** `--model ensemble,name=llama,tokenizer-dir=/tok,chat-template=llama3`. */
function modelSpec(text: string): CliModel {
  const kv = keyValues('--model', text, 'model', MODEL_KEYS);
  const model = kv.get('model');
  if (model === undefined) throw new UsageError(`--model ${text}: names no Triton model`);
  const chatTemplate = templateChoice(`--model ${text}`, kv.get('chat-template'));
  const name = kv.get('name');
  const tokenizerDir = kv.get('tokenizer-dir');
  return {
    model,
    ...(name !== undefined ? { name } : {}),
    ...(tokenizerDir !== undefined ? { tokenizerDir } : {}),
    ...(chatTemplate !== undefined ? { chatTemplate } : {}),
  };
}

/** `--lora sql,base=llama,task-id=3[,dir=/loras/sql]` (the C++ model) or `--lora sql,base=qwen,task-id=3,lora-name=sql,path=/loras/sql`. */
function loraSpec(text: string): { base: string | undefined; adapter: CliAdapter } {
  const kv = keyValues('--lora', text, 'name', LORA_KEYS);
  const name = kv.get('name');
  if (name === undefined) throw new UsageError(`--lora ${text}: names no adapter`);
  const taskText = kv.get('task-id');
  const taskId = taskText === undefined ? undefined : Number(taskText);
  if (taskId !== undefined && (!Number.isSafeInteger(taskId) || taskId < 0))
    throw new UsageError(`--lora ${text}: task-id must be a non-negative integer (got "${taskText}")`);
  const loraName = kv.get('lora-name');
  const path = kv.get('path');
  const dir = kv.get('dir');
  const ckptSource = kv.get('ckpt-source');
  if (ckptSource !== undefined && ckptSource !== 'hf' && ckptSource !== 'nemo')
    throw new UsageError(`--lora ${text}: ckpt-source must be hf or nemo (got "${ckptSource}")`);
  if (ckptSource !== undefined && path === undefined)
    throw new UsageError(`--lora ${text}: ckpt-source is the format of the checkpoint at path: give path`);
  if (dir !== undefined && taskId === undefined)
    throw new UsageError(
      `--lora ${text}: dir (the C++ model's weights) needs task-id, which Triton caches them by`,
    );
  if (taskId === undefined && loraName === undefined && path === undefined)
    throw new UsageError(
      `--lora ${text}: give task-id (the C++ model), task-id, lora-name and path (LLM API), or lora-name (vLLM)`,
    );
  return {
    base: kv.get('base'),
    adapter: {
      name,
      ...(taskId !== undefined ? { taskId } : {}),
      ...(loraName !== undefined ? { loraName } : {}),
      ...(path !== undefined ? { path } : {}),
      ...(ckptSource !== undefined ? { ckptSource } : {}),
      ...(dir !== undefined ? { dir } : {}),
    },
  };
}

/** The models of repeated `--model` and `--lora` flags; `--model all` alone serves the whole repository. */
export function modelsFromFlags(modelFlags: readonly string[], loraFlags: readonly string[]): CliModels {
  if (modelFlags.includes('all')) {
    if (modelFlags.length > 1) throw new UsageError('--model all serves every model; give it alone');
    if (loraFlags.length > 0)
      throw new UsageError('--lora needs its base model named with --model (not --model all)');
    return { all: true };
  }
  const models = (modelFlags.length > 0 ? modelFlags : ['ensemble']).map(modelSpec);
  const adapters = new Map<CliModel, CliAdapter[]>(models.map((m) => [m, []]));
  for (const text of loraFlags) {
    const { base, adapter } = loraSpec(text);
    const served = (m: CliModel) => m.name ?? m.model;
    let owner: CliModel | undefined;
    if (base === undefined) {
      if (models.length > 1)
        throw new UsageError(
          `--lora ${text}: with several models, say which with base=<${models.map(served).join('|')}>`,
        );
      owner = models[0];
    } else {
      owner = models.find((m) => served(m) === base);
      if (owner === undefined)
        throw new UsageError(
          `--lora ${text}: base "${base}" is not a served model (${models.map(served).join(', ')})`,
        );
    }
    adapters.get(owner!)!.push(adapter);
  }
  return {
    all: false,
    models: models.map((m) => {
      const own = adapters.get(m)!;
      return own.length > 0 ? { ...m, adapters: own } : m;
    }),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function optionalString(where: string, obj: Record<string, unknown>, key: string): string | undefined {
  const value = obj[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0)
    throw new UsageError(`${where}.${key} must be a non-empty string (got ${JSON.stringify(value)})`);
  return value;
}

function only(where: string, obj: Record<string, unknown>, keys: readonly string[]): void {
  for (const key of Object.keys(obj)) {
    if (!keys.includes(key))
      throw new UsageError(`${where}: unknown key "${key}" (keys: ${keys.join(', ')})`);
  }
}

/**
 * `--config file.json`: `{ "models": [{ "model": "ensemble", "name": "llama", "tokenizerDir": "...",
 * "chatTemplate": "llama3", "adapters": [{ "name": "sql", "taskId": 3 }] }] }`, the library's
 * `models` option with the tokenizer as a directory. Every key is checked, naming its place.
 */
export async function modelsFromConfig(path: string): Promise<CliModels> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`--config ${path}: ${(err as Error).message}`);
  }
  const where = `--config ${path}`;
  if (!isObject(json)) throw new UsageError(`${where}: must be a JSON object with "models"`);
  only(where, json, ['models']);
  if (json.models === 'all') return { all: true };
  if (!Array.isArray(json.models) || json.models.length === 0)
    throw new UsageError(`${where}: "models" must be "all" or a non-empty array of { "model": ... }`);
  const models = json.models.map((entry: unknown, i: number): CliModel => {
    const at = `${where}: models[${i}]`;
    if (!isObject(entry)) throw new UsageError(`${at} must be an object`);
    only(at, entry, ['model', 'name', 'tokenizerDir', 'chatTemplate', 'adapters']);
    const model = optionalString(at, entry, 'model');
    if (model === undefined) throw new UsageError(`${at}.model is missing (the Triton model to call)`);
    const name = optionalString(at, entry, 'name');
    const tokenizerDir = optionalString(at, entry, 'tokenizerDir');
    const chatTemplate = templateChoice(`${at}.chatTemplate`, optionalString(at, entry, 'chatTemplate'));
    const adapters = entry.adapters;
    if (adapters !== undefined && !Array.isArray(adapters))
      throw new UsageError(`${at}.adapters must be an array`);
    return {
      model,
      ...(name !== undefined ? { name } : {}),
      ...(tokenizerDir !== undefined ? { tokenizerDir } : {}),
      ...(chatTemplate !== undefined ? { chatTemplate } : {}),
      ...(adapters !== undefined
        ? {
            adapters: adapters.map((a: unknown, k: number) => {
              const aw = `${at}.adapters[${k}]`;
              if (!isObject(a)) throw new UsageError(`${aw} must be an object`);
              only(aw, a, ['name', 'taskId', 'loraName', 'path', 'ckptSource', 'dir']);
              // The values are checked where the library checks them, naming the same place.
              return a as unknown as CliAdapter;
            }),
          }
        : {}),
    };
  });
  return { all: false, models };
}
