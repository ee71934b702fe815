/** Driving a stream step by step: wait for the n-th message, send more, cancel. */
import type { ClientDuplexStream, ServiceError } from '@grpc/grpc-js';
import type { StreamMessage, TestClient } from './grpc-client.js';

export interface OpenStream {
  readonly call: ClientDuplexStream<object, StreamMessage>;
  readonly messages: StreamMessage[];
  /** Resolves once `n` messages have arrived. */
  received(n: number): Promise<void>;
  /** Resolves when the call ends: its error, or undefined when it ended OK. */
  readonly ended: Promise<ServiceError | undefined>;
}

export function openStream(client: TestClient, options: { deadline?: number } = {}): OpenStream {
  const call =
    options.deadline === undefined
      ? client.stream()
      : client.raw.ModelStreamInfer({ deadline: Date.now() + options.deadline });
  const messages: StreamMessage[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  call.on('data', (m: StreamMessage) => {
    messages.push(m);
    for (const w of [...waiters]) {
      if (messages.length >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  const ended = new Promise<ServiceError | undefined>((resolve) => {
    call.on('error', (e: ServiceError) => resolve(e));
    call.on('end', () => resolve(undefined));
  });
  return {
    call,
    messages,
    ended,
    received: (n) =>
      messages.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
  };
}

/** Reads an HTTP body until `n` SSE events have arrived; returns the reader to go on or cancel. */
export async function readEvents(
  res: Response,
  n: number,
): Promise<{ text: string; reader: ReadableStreamDefaultReader<Uint8Array> }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (text.split('\n\n').length - 1 < n) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return { text, reader };
}
