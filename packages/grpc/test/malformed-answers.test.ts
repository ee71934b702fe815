import { create, toBinary } from '@bufbuild/protobuf';
import { grpcTransport } from '@trtllm/grpc';
import { createTensor, type Transport, tensorBigInts, tensorNumbers, tensorStrings } from '@trtllm/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ModelInferResponseSchema,
  ModelStreamInferResponseSchema,
} from '../src/gen/inference/grpc_service_pb.js';
import { type ScriptedAnswer, type ScriptedServer, startScriptedServer } from './scripted-server.js';
import { rejection } from './support.js';

const request = {
  model: 'm',
  id: 'r1',
  inputs: [createTensor('input_ids', 'INT32', [1, 2], [5, 6])],
};

let server: ScriptedServer | undefined;
let transport: Transport | undefined;

async function against(answer: (path: string) => ScriptedAnswer): Promise<Transport> {
  server = await startScriptedServer(answer);
  transport = grpcTransport({ baseUrl: server.baseUrl });
  return transport;
}

afterEach(async () => {
  await transport?.close();
  await server?.close();
  transport = undefined;
  server = undefined;
});

describe('answers the client cannot read', () => {
  it('a response that is not protobuf is a protocol error', async () => {
    const t = await against(() => ({ messages: [Uint8Array.of(0xff, 0xff, 0xff, 0xff)] }));
    const err = await rejection(t.infer(request));
    expect(err.code).toBe('protocol');
  });

  it('raw output contents that do not match the outputs are a protocol error', async () => {
    const body = toBinary(
      ModelInferResponseSchema,
      create(ModelInferResponseSchema, {
        modelName: 'm',
        id: 'r1',
        outputs: [{ name: 'a', datatype: 'INT32', shape: [1n, 2n] }],
        rawOutputContents: [Uint8Array.of(1, 0, 0, 0)],
      }),
    );
    const t = await against(() => ({ messages: [body] }));
    const err = await rejection(t.infer(request));
    expect(err.code).toBe('protocol');
    expect(err.requestId).toBe('r1');
  });

  it('a stream whose call ends before a final response throws protocol after the responses', async () => {
    const chunk = toBinary(
      ModelStreamInferResponseSchema,
      create(ModelStreamInferResponseSchema, {
        inferResponse: {
          modelName: 'm',
          id: 'r1',
          parameters: { triton_final_response: { parameterChoice: { case: 'boolParam', value: false } } },
          outputs: [{ name: 'output_ids', datatype: 'INT32', shape: [1n, 1n, 1n] }],
          rawOutputContents: [Uint8Array.of(42, 0, 0, 0)],
        },
      }),
    );
    const t = await against(() => ({ messages: [chunk] }));
    const seen: number[] = [];
    const err = await rejection(
      (async () => {
        for await (const r of t.stream(request)) seen.push(...tensorNumbers(r.outputs[0]!));
      })(),
    );
    expect(seen).toEqual([42]);
    expect(err.code).toBe('protocol');
  });
});

describe('answers in less common forms', () => {
  it('reads outputs sent as typed contents instead of raw bytes', async () => {
    const body = toBinary(
      ModelInferResponseSchema,
      create(ModelInferResponseSchema, {
        modelName: 'm',
        modelVersion: '3',
        id: 'r1',
        outputs: [
          { name: 'ids', datatype: 'INT32', shape: [1n, 3n], contents: { intContents: [7, -8, 9] } },
          { name: 'big', datatype: 'UINT64', shape: [1n], contents: { uint64Contents: [2n ** 63n] } },
          {
            name: 'text',
            datatype: 'BYTES',
            shape: [1n, 1n],
            contents: { bytesContents: [new TextEncoder().encode('héllo')] },
          },
        ],
      }),
    );
    const t = await against(() => ({ messages: [body] }));
    const r = await t.infer(request);
    expect(r.modelVersion).toBe('3');
    expect(r.final).toBe(true);
    expect(r.outputs.map((o) => [o.name, o.datatype, o.shape])).toEqual([
      ['ids', 'INT32', [1, 3]],
      ['big', 'UINT64', [1]],
      ['text', 'BYTES', [1, 1]],
    ]);
    expect(tensorNumbers(r.outputs[0]!)).toEqual([7, -8, 9]);
    expect(tensorBigInts(r.outputs[1]!)).toEqual([2n ** 63n]);
    expect(tensorStrings(r.outputs[2]!)).toEqual(['héllo']);
  });

  it('an unknown model reported as UNAVAILABLE is not_found, with the message verbatim', async () => {
    const message = "Request for unknown model: 'm' is not found";
    const t = await against(() => ({ messages: [], status: 14, statusMessage: message }));
    const err = await rejection(t.infer(request));
    expect(err.code).toBe('not_found');
    expect(err.serverMessage).toBe(message);
    expect(err.grpcStatus).toBe(14);
    expect(err.retryable).toBe(false);
  });

  it('a gRPC status keeps its code and message', async () => {
    const message = "[request id: r1] unexpected shape for input 'input_ids'";
    const t = await against(() => ({ messages: [], status: 3, statusMessage: message }));
    const err = await rejection(t.infer(request));
    expect(err.code).toBe('invalid_argument');
    expect(err.serverMessage).toBe(message);
    expect(err.model).toBe('m');
  });
});
