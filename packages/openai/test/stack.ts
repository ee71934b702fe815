import {
  createOpenAiServer,
  type OpenAiServer,
  type OpenAiServerOptions,
  transportFromUrl,
} from '@trtllm/openai';
import { type FakeTriton, type FakeTritonOptions, startFakeTriton } from '@trtllm/testing';
import OpenAI from 'openai';

/** The fake Triton, this package's server in front of it, and the official OpenAI client pointed at it. */
export interface Stack {
  readonly fake: FakeTriton;
  readonly client: OpenAI;
  readonly baseURL: string;
  /** The server's request handler, to mount in another server. */
  readonly handler: OpenAiServer['handler'];
  close(): Promise<void>;
}

type ServerExtras = Omit<
  Extract<OpenAiServerOptions, { readonly transport: unknown }>,
  'transport' | 'model'
>;

/** Starts the three; `protocol` picks how the server reaches Triton (through the CLI's URL mapping). */
export async function startStack(
  options: {
    readonly model?: string;
    readonly protocol?: 'grpc' | 'http';
    readonly server?: ServerExtras;
    readonly fake?: FakeTritonOptions;
    readonly apiKey?: string;
  } = {},
): Promise<Stack> {
  const fake = await startFakeTriton({ grpcPort: 0, httpPort: 0, ...options.fake });
  const url =
    (options.protocol ?? 'grpc') === 'grpc' ? fake.grpcUrl.replace(/^http:/, 'grpc:') : fake.httpUrl;
  const transport = transportFromUrl(url);
  const server = createOpenAiServer({ transport, model: options.model ?? 'ensemble', ...options.server });
  const baseURL = await server.listen(0);
  // No retries: a test must see the first answer, and a retried 5xx would hide it.
  const client = new OpenAI({ baseURL, apiKey: options.apiKey ?? 'sk-test', maxRetries: 0, timeout: 15_000 });
  return {
    fake,
    client,
    baseURL,
    handler: server.handler,
    async close() {
      await server.close();
      await transport.close();
      await fake.close();
    },
  };
}
