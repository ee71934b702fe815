/** One fake Triton per test file (or describe block), closed afterwards. */

import { type FakeTriton, type FakeTritonOptions, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll } from 'vitest';
import { connect, type TestClient } from './grpc-client.js';

export interface Harness {
  readonly fake: FakeTriton;
  readonly grpc: TestClient;
}

export function useFake(options: FakeTritonOptions = {}): Harness {
  const box: { fake?: FakeTriton; grpc?: TestClient } = {};
  beforeAll(async () => {
    box.fake = await startFakeTriton(options);
    box.grpc = connect(box.fake.grpcUrl);
  });
  afterAll(async () => {
    box.grpc?.close();
    await box.fake?.close();
  });
  return {
    get fake() {
      if (!box.fake) throw new Error('fake not started');
      return box.fake;
    },
    get grpc() {
      if (!box.grpc) throw new Error('fake not started');
      return box.grpc;
    },
  };
}

/** POSTs JSON to the fake's HTTP front end. */
export function post(
  fake: FakeTriton,
  path: string,
  body: unknown,
  init: RequestInit = {},
): Promise<Response> {
  return fetch(`${fake.httpUrl}${path}`, {
    method: 'POST',
    body: typeof body === 'string' || body instanceof Uint8Array ? (body as BodyInit) : JSON.stringify(body),
    ...init,
  });
}

/** The JSON of each `data:` event of an SSE body. */
export function sseEvents(body: string): Record<string, unknown>[] {
  return body
    .split('\n\n')
    .filter((chunk) => chunk.startsWith('data: '))
    .map((chunk) => JSON.parse(chunk.slice('data: '.length)) as Record<string, unknown>);
}

let counter = 0;
/** A request id unique within the test run. */
export function uniqueId(prefix = 'req'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}
