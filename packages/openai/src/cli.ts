#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { parseTritonUrl, transportFromUrl } from '@trtllm/connect';
import { TritonLlm } from '@trtllm/sdk';
import {
  CHAT_TEMPLATE_CHOICES,
  type ChatTemplateChoice,
  loadTokenizerDir,
  TOOL_CALL_PARSERS,
  type ToolCallParserChoice,
} from '@trtllm/tokenizers';
import { waitForBackend } from './backend-check.js';
import { cliTokenizerSetting } from './raw-model.js';
import { createOpenAiServer } from './server.js';

const USAGE = `Usage: trtllm-openai [options]

An OpenAI-compatible API (/v1/models, /v1/completions, /v1/chat/completions) in front of Triton.

Options:
  --triton <url>           Triton address: grpc://host:port (grpcs:// for TLS, or dns:host:port),
                           or http(s)://host:port[/prefix] (default grpc://localhost:8001)
  --model <name>           Triton model to call (default ensemble); checked at start
  --triton-wait <seconds>  How long to wait at start for Triton to answer and the model to be
                           ready, trying again with a line per attempt (default 30)
  --served-model-name <n>  Model name clients use (default: --model)
  --port <port>            Port to listen on (default 3000)
  --host <host>            Address to listen on (default 127.0.0.1)
  --api-key <key>          Require "Authorization: Bearer <key>" (or set TRTLLM_OPENAI_API_KEY)
  --chat-template <name>   auto | chatml | llama2 | llama3 (default auto: the model's own, else chatml)
  --tokenizer-dir <dir>    Hugging Face tokenizer directory: its chat template, and its tokenizer.json when
                           it has one (needed for the raw tensorrt_llm model; counts prompt tokens for older
                           ensembles); a path without either fails at start
  --default-max-tokens <n> max_tokens of chat requests that give none (default 1024)
  --tool-call-parser <p>   auto | hermes | llama3_json: how tool calls are read from the model's text
                           (default auto: the format the chat template teaches)
  -h, --help               Show this help
`;

/**
 * The transports' messages in the user's --triton terms: a gRPC transport names its endpoint by
 * the http(s):// origin it dials (`the server at http://host:8000`), which the user gave as
 * `grpc://host:8000` (issue 53), and its hints name SDK functions (`use httpTransport for HTTP`)
 * where the fix is the --triton address with the other scheme.
 */
function cliHints(triton: string): (detail: string) => string {
  const endpoint = parseTritonUrl(triton, { field: '--triton' });
  const hostPort = /^[a-z]+:\/\/([^/]+)/i.exec(triton)?.[1];
  let own: (detail: string) => string = (detail) => detail;
  if (endpoint.protocol === 'grpc' && 'baseUrl' in endpoint) {
    const dialed = new RegExp(`${endpoint.baseUrl.replace(/[.[\]]/g, '\\$&')}(?![\\w.:-])`, 'gi');
    own = (detail) => detail.replace(dialed, () => triton);
  } else if (endpoint.protocol === 'grpc') {
    // A dns: name dials the addresses it resolves to: those keep their host:port, in gRPC's scheme.
    own = (detail) =>
      detail.replace(
        /\b(the server at |the connection to )http(s?):\/\//g,
        (_, lead: string, tls: string) => `${lead}grpc${tls}://`,
      );
  }
  if (hostPort === undefined) return own;
  return (detail) =>
    own(detail)
      .replace('use httpTransport for HTTP', `use --triton http://${hostPort} if this is its HTTP port`)
      .replace('use grpcTransport for gRPC', `use --triton grpc://${hostPort} if this is its gRPC port`);
}

function fail(message: string): never {
  process.stderr.write(`trtllm-openai: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function integerFlag(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    fail(`--${name} must be a non-negative integer (got ${JSON.stringify(value)})`);
  return n;
}

async function main(): Promise<void> {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse().values;
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const template = values['chat-template'] ?? 'auto';
  if (!(CHAT_TEMPLATE_CHOICES as readonly string[]).includes(template)) {
    fail(
      `--chat-template must be one of ${CHAT_TEMPLATE_CHOICES.join(', ')} (got ${JSON.stringify(template)})`,
    );
  }
  const toolCallParser = values['tool-call-parser'] ?? 'auto';
  if (!(TOOL_CALL_PARSERS as readonly string[]).includes(toolCallParser)) {
    fail(
      `--tool-call-parser must be one of ${TOOL_CALL_PARSERS.join(', ')} (got ${JSON.stringify(toolCallParser)})`,
    );
  }
  const triton = values.triton ?? 'grpc://localhost:8001';
  const waitSeconds = Number(values['triton-wait'] ?? '30');
  if (!Number.isFinite(waitSeconds) || waitSeconds < 0)
    fail(
      `--triton-wait must be a non-negative number of seconds (got ${JSON.stringify(values['triton-wait'])})`,
    );
  const transport = transportFromUrl(triton, { field: '--triton' });
  const tokenizerDir = values['tokenizer-dir'];
  const tokenizer =
    tokenizerDir !== undefined
      ? await loadTokenizerDir(tokenizerDir, { field: '--tokenizer-dir' })
      : undefined;
  const llm = new TritonLlm({
    transport,
    model: values.model ?? 'ensemble',
    ...(tokenizer !== undefined ? { tokenizer } : {}),
  });
  await waitForBackend({
    llm,
    transport,
    waitMs: waitSeconds * 1000,
    log: (m) => process.stderr.write(`trtllm-openai: ${m}\n`),
    settings: {
      triton: `Triton at ${triton}`,
      model: '--model',
      wait: '--triton-wait',
      hints: cliHints(triton),
    },
    tokenizer: { present: tokenizer !== undefined, setting: cliTokenizerSetting(tokenizerDir) },
  });
  const apiKey = values['api-key'] ?? process.env.TRTLLM_OPENAI_API_KEY;
  const server = createOpenAiServer({
    llm,
    chatTemplate: template as ChatTemplateChoice,
    toolCallParser: toolCallParser as ToolCallParserChoice,
    defaultMaxTokens: integerFlag('default-max-tokens', values['default-max-tokens'], 1024),
    ...(values['served-model-name'] !== undefined ? { modelName: values['served-model-name'] } : {}),
    ...(apiKey !== undefined && apiKey.length > 0 ? { apiKey } : {}),
    ...(values['tokenizer-dir'] !== undefined ? { tokenizerDir: values['tokenizer-dir'] } : {}),
    ...(tokenizer !== undefined ? { tokenizer } : {}),
  });
  const url = await server.listen(integerFlag('port', values.port, 3000), values.host ?? '127.0.0.1');
  process.stdout.write(`trtllm-openai: serving '${values['served-model-name'] ?? llm.model}' at ${url}\n`);
  const shutdown = (): void => {
    void server
      .close()
      .then(() => llm.close())
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

function parse() {
  return parseArgs({
    options: {
      triton: { type: 'string' },
      model: { type: 'string' },
      'served-model-name': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'api-key': { type: 'string' },
      'chat-template': { type: 'string' },
      'tokenizer-dir': { type: 'string' },
      'default-max-tokens': { type: 'string' },
      'triton-wait': { type: 'string' },
      'tool-call-parser': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`trtllm-openai: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
