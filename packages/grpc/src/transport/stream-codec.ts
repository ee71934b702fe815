import { gunzipSync, gzipSync } from 'node:zlib';
import { Code, ConnectError } from '@connectrpc/connect';
import type { InferRequest, InferResponse } from '@trtllm/sdk';
import { frameMessage, messageTooLarge } from './grpc-frames.js';
import { STREAM_PARAMETERS } from './stream.js';
import type { WireResponse } from './wire-reader.js';
import { writeModelInferRequest } from './wire-writer.js';

// Requests this size and up are compressed when gzip is on (small ones would only grow).
const COMPRESS_MIN_BYTES = 1024;

/** A streamed request as it goes on the wire: encoded, compressed when worth it, framed, checked against the limit. */
export function encodeStreamRequest(
  request: InferRequest,
  settings: { readonly gzip: boolean; readonly maxSendBytes: number | undefined },
): Buffer {
  return encodeFramed(writeModelInferRequest(request, STREAM_PARAMETERS), settings);
}

/** A request message framed for the wire: compressed when worth it, checked against the limit. */
export function encodeFramed(
  message: Uint8Array,
  settings: { readonly gzip: boolean; readonly maxSendBytes: number | undefined },
): Buffer {
  const compress = settings.gzip && message.length >= COMPRESS_MIN_BYTES;
  const body = compress ? gzipSync(message) : message;
  if (settings.maxSendBytes !== undefined && body.length > settings.maxSendBytes) {
    throw new ConnectError(
      `message size ${body.length} is larger than configured writeMaxBytes ${settings.maxSendBytes}`,
      Code.ResourceExhausted,
    );
  }
  return frameMessage(body, compress);
}

/** A compressed response message inflated, bounded by the same limit as the message itself. */
export function inflate(bytes: Buffer, encoding: string | undefined, limit: number): Buffer {
  if (encoding !== 'gzip') {
    throw new ConnectError(
      `protocol error: received compressed envelope with encoding ${String(encoding)}`,
      Code.Internal,
    );
  }
  try {
    return gunzipSync(bytes, { maxOutputLength: limit });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw messageTooLarge(limit + 1, limit);
    throw new ConnectError(
      `protocol error: a gzip message cannot be inflated (${String(err)})`,
      Code.Internal,
    );
  }
}

/**
 * Which responses of a request its consumer sees, and which is its last. A stop request shares the
 * main request's id and gets its own empty final response, so after a stop two final-flagged
 * responses are awaited and only the last is reported as final.
 */
export class FinalResponses {
  private expected = 1;
  private seen = 0;
  /** The last final response came: what follows belongs to no request of this stream. */
  complete = false;

  /** A stop request was sent: one more final response will come. */
  expectStop(): void {
    this.expected += 1;
  }

  /** The response to hand on, or undefined for one the consumer must not see. */
  accept(r: WireResponse): InferResponse | undefined {
    if (this.complete) return undefined;
    if (!r.wireFinal) return r;
    this.seen += 1;
    if (this.seen < this.expected) {
      // Either the stop request's empty final or the main request's last data: only data is news.
      return r.outputs.length > 0 ? r : undefined;
    }
    this.complete = true;
    r.final = true;
    return r;
  }
}
