import { httpTransport } from '@trtllm/http';
import { createTensor, tensorBigInts, tensorNumbers, tensorStrings } from '@trtllm/sdk';
import { decodeTensorData, encodeTensorData } from '@trtllm/sdk/transport';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejection } from './helpers.js';
import { sendJson, startScriptedServer } from './scripted-server.js';

// Binary outputs: a JSON header, then the blobs; `mixed` answers one output in binary, one as JSON data.
const ids = createTensor('output_ids', 'INT64', [1, 3], [5n, 2n ** 60n, -7n]);
const idsBlob = encodeTensorData(ids);

let server: Awaited<ReturnType<typeof startScriptedServer>>;
beforeAll(async () => {
  server = await startScriptedServer((req, res) => {
    if (req.url.includes('/json/')) {
      return sendJson(res, 200, {
        model_name: 'json',
        model_version: '2',
        id: 'w-1',
        outputs: [
          { name: 'text_output', datatype: 'BYTES', shape: [1, 1], data: ['héllo'] },
          { name: 'seq', datatype: 'INT64', shape: [1, 2], data: [3, 4] },
          { name: 'flags', datatype: 'BOOL', shape: [2], data: [true, false] },
        ],
      });
    }
    if (req.url.includes('/mixed/')) {
      const header = Buffer.from(
        JSON.stringify({
          model_name: 'mixed',
          model_version: '1',
          outputs: [
            {
              name: 'output_ids',
              datatype: 'INT64',
              shape: [1, 3],
              parameters: { binary_data_size: idsBlob.byteLength },
            },
            { name: 'probs', datatype: 'FP32', shape: [2], data: [0.5, 0.25] },
          ],
        }),
      );
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'inference-header-content-length': String(header.byteLength),
      });
      return res.end(Buffer.concat([header, idsBlob]));
    }
    if (req.url.includes('/short/')) {
      const header = Buffer.from(
        JSON.stringify({
          outputs: [{ name: 'x', datatype: 'INT32', shape: [4], parameters: { binary_data_size: 16 } }],
        }),
      );
      res.writeHead(200, { 'inference-header-content-length': String(header.byteLength) });
      return res.end(Buffer.concat([header, Buffer.alloc(8)]));
    }
    sendJson(res, 400, { error: 'unexpected' });
  });
});
afterAll(() => server.close());

describe('the KServe /infer wire format', () => {
  it('sends inputs as binary blobs after a JSON header, asking for binary outputs', async () => {
    const text = createTensor('text_input', 'BYTES', [1, 1], ['hi']);
    const half = createTensor('embedding', 'FP16', [1, 2], [1.5, -2]);
    await httpTransport({ baseUrl: server.url }).infer({
      model: 'json',
      modelVersion: '2',
      id: 'w-1',
      inputs: [text, half],
      parameters: { priority: 1 },
    });
    const request = server.received.at(-1)!;
    expect(request.url).toBe('/v2/models/json/versions/2/infer');
    expect(request.headers['content-type']).toBe('application/octet-stream');
    const headerLength = Number(request.headers['inference-header-content-length']);
    const header = JSON.parse(request.body.subarray(0, headerLength).toString('utf8'));
    expect(header.id).toBe('w-1');
    expect(header.parameters).toEqual({ priority: 1, binary_data_output: true });
    expect(
      header.inputs.map((i: { name: string; shape: number[]; datatype: string }) => [
        i.name,
        i.shape,
        i.datatype,
      ]),
    ).toEqual([
      ['text_input', [1, 1], 'BYTES'],
      ['embedding', [1, 2], 'FP16'],
    ]);
    const sizes = header.inputs.map(
      (i: { parameters: { binary_data_size: number } }) => i.parameters.binary_data_size,
    );
    const blobs = request.body.subarray(headerLength);
    expect(blobs.byteLength).toBe(sizes[0] + sizes[1]);
    const first = new Uint8Array(blobs.subarray(0, sizes[0]));
    expect(tensorStrings({ ...text, data: decodeTensorData('BYTES', [1, 1], first) })).toEqual(['hi']);
    const second = new Uint8Array(blobs.subarray(sizes[0]));
    expect(Array.from(decodeTensorData('FP16', [1, 2], second) as Float32Array)).toEqual([1.5, -2]);
  });

  it('names the outputs it wants, each in binary', async () => {
    await httpTransport({ baseUrl: server.url }).infer({
      model: 'json',
      id: '',
      inputs: [],
      outputs: ['seq'],
    });
    const request = server.received.at(-1)!;
    const header = JSON.parse(request.body.toString('utf8'));
    expect(header).toEqual({ inputs: [], outputs: [{ name: 'seq', parameters: { binary_data: true } }] });
  });

  it('reads outputs sent as JSON data in their declared types', async () => {
    const response = await httpTransport({ baseUrl: server.url }).infer({
      model: 'json',
      id: 'w-1',
      inputs: [],
    });
    expect(response).toMatchObject({ model: 'json', modelVersion: '2', id: 'w-1', final: true });
    const [text, seq, flags] = response.outputs;
    expect(text).toMatchObject({ datatype: 'BYTES', shape: [1, 1] });
    expect(tensorStrings(text!)).toEqual(['héllo']);
    expect(seq?.data).toBeInstanceOf(BigInt64Array);
    expect(tensorBigInts(seq!)).toEqual([3n, 4n]);
    expect(flags?.data).toEqual([true, false]);
  });

  it('reads binary outputs exactly and JSON outputs beside them', async () => {
    const response = await httpTransport({ baseUrl: server.url }).infer({
      model: 'mixed',
      id: 'w-2',
      inputs: [],
    });
    const [outIds, probs] = response.outputs;
    expect(outIds?.shape).toEqual([1, 3]);
    expect(tensorBigInts(outIds!)).toEqual([5n, 2n ** 60n, -7n]);
    expect(probs?.datatype).toBe('FP32');
    expect(tensorNumbers(probs!)).toEqual([0.5, 0.25]);
    expect(response.id).toBe('w-2');
  });

  it('fails with protocol when the binary data is shorter than declared', async () => {
    const err = await rejection(
      httpTransport({ baseUrl: server.url }).infer({ model: 'short', id: 'w-3', inputs: [] }),
    );
    expect(err.code).toBe('protocol');
  });
});
