// Shared by the examples: use the Triton named by TRITON_GRPC_URL / TRITON_HTTP_URL, or start the
// embedded fake Triton so every example runs on any machine (CI runs them all as smoke tests).
import { startFakeTriton } from '@trtllm/testing';

export interface Server {
  readonly grpcUrl: string;
  readonly httpUrl: string;
  close(): Promise<void>;
}

export async function server(options: { ttftMs?: number; itlMs?: number } = {}): Promise<Server> {
  const grpcUrl = process.env.TRITON_GRPC_URL;
  const httpUrl = process.env.TRITON_HTTP_URL;
  if (grpcUrl && httpUrl) return { grpcUrl, httpUrl, close: async () => undefined };
  const fake = await startFakeTriton(options);
  return { grpcUrl: fake.grpcUrl, httpUrl: fake.httpUrl, close: () => fake.close() };
}
