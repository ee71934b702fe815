import { type ClientHttp2Session, connect, constants } from 'node:http2';
import { create, toBinary } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { ModelInferRequestSchema } from '../../../packages/grpc/src/gen/inference/grpc_service_pb.js';
import { ensembleRequestInit, firstString } from '../wire.js';
import type { Endpoints, Variant } from './variant.js';

/** What one streamed response says, read by walking its fields (nothing else is decoded). */
interface Walked {
  readonly error: string;
  readonly text: Uint8Array | undefined;
  readonly final: boolean;
}

/**
 * The floor: what a user who knows gRPC's framing writes on `node:http2` alone. One HTTP/2 stream per
 * request (so a cancel stays per request), the request encoded with protobuf-es, and each response
 * read by a field walker (`@bufbuild/protobuf/wire`) that looks only at `error_message`, the outputs'
 * names, `raw_output_contents` and the `triton_final_response` parameter.
 */
export function http2BareVariant(endpoints: Endpoints): Variant {
  let session: ClientHttp2Session | undefined;
  const sessionFor = (): ClientHttp2Session => {
    if (session === undefined || session.closed || session.destroyed) {
      session = connect(endpoints.grpcUrl, { maxSessionMemory: 256 });
      session.on('error', () => undefined);
    }
    return session;
  };
  return {
    stream(prompt, maxTokens, id, onFirstToken) {
      const message = toBinary(
        ModelInferRequestSchema,
        create(ModelInferRequestSchema, ensembleRequestInit(prompt, maxTokens, id)),
      );
      const frame = Buffer.allocUnsafe(5 + message.length);
      frame[0] = 0;
      frame.writeUInt32BE(message.length, 1);
      frame.set(message, 5);
      return new Promise<number>((resolve, reject) => {
        const stream = sessionFor().request({
          [constants.HTTP2_HEADER_METHOD]: 'POST',
          [constants.HTTP2_HEADER_PATH]: '/inference.GRPCInferenceService/ModelStreamInfer',
          'content-type': 'application/grpc',
          te: 'trailers',
        });
        let tokens = 0;
        let text = '';
        let pending: Buffer | undefined;
        stream.on('data', (chunk: Buffer) => {
          let buf = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
          pending = undefined;
          while (buf.length >= 5) {
            const length = buf.readUInt32BE(1);
            if (buf.length < 5 + length) break;
            const r = walk(buf.subarray(5, 5 + length));
            buf = buf.subarray(5 + length);
            if (r.error !== '') {
              stream.close(constants.NGHTTP2_CANCEL);
              reject(new Error(r.error));
              return;
            }
            if (r.text !== undefined) {
              if (tokens === 0) onFirstToken?.();
              tokens += 1;
              text += firstString(r.text);
            }
            if (r.final) stream.end();
          }
          if (buf.length > 0) pending = buf;
        });
        stream.on('trailers', (trailers) => {
          const status = trailers['grpc-status'];
          if (status !== undefined && status !== '0') {
            reject(new Error(`grpc-status ${String(status)}: ${String(trailers['grpc-message'])}`));
          }
        });
        stream.on('error', reject);
        stream.on('close', () => {
          if (tokens > 0 && text.length === 0) reject(new Error('tokens counted but no text received'));
          else resolve(tokens);
        });
        stream.write(frame);
      });
    },
    close: async () => session?.close(),
  };
}

/** Reads a `ModelStreamInferResponse`, descending only into what the benchmark needs. */
function walk(bytes: Uint8Array): Walked {
  const reader = new BinaryReader(bytes);
  let error = '';
  let names: string[] = [];
  let raw: Uint8Array[] = [];
  let final = false;
  while (reader.pos < reader.len) {
    const [field, type] = reader.tag();
    if (field === 1 && type === WireType.LengthDelimited) error = reader.string();
    else if (field === 2 && type === WireType.LengthDelimited) {
      const r = new BinaryReader(reader.bytes());
      names = [];
      raw = [];
      while (r.pos < r.len) {
        const [f, t] = r.tag();
        if (f === 5 && t === WireType.LengthDelimited) names.push(outputName(r.bytes()));
        else if (f === 6 && t === WireType.LengthDelimited) raw.push(r.bytes());
        else if (f === 4 && t === WireType.LengthDelimited) final ||= isFinalEntry(r.bytes());
        else r.skip(t, f);
      }
    } else reader.skip(type, field);
  }
  const index = names.indexOf('text_output');
  return { error, text: index >= 0 ? raw[index] : undefined, final };
}

function outputName(bytes: Uint8Array): string {
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const [f, t] = r.tag();
    if (f === 1 && t === WireType.LengthDelimited) return r.string();
    r.skip(t, f);
  }
  return '';
}

/** A `parameters` map entry: key (1) and `InferParameter` (2) whose `bool_param` is field 1. */
function isFinalEntry(bytes: Uint8Array): boolean {
  const r = new BinaryReader(bytes);
  let key = '';
  let value = false;
  while (r.pos < r.len) {
    const [f, t] = r.tag();
    if (f === 1 && t === WireType.LengthDelimited) key = r.string();
    else if (f === 2 && t === WireType.LengthDelimited) {
      const p = new BinaryReader(r.bytes());
      while (p.pos < p.len) {
        const [pf, pt] = p.tag();
        if (pf === 1 && pt === WireType.Varint) value = p.bool();
        else p.skip(pt, pf);
      }
    } else r.skip(t, f);
  }
  return key === 'triton_final_response' && value;
}
