import type { InferRequest, InferResponse } from '@trtllm/sdk';
import { encodeFramed } from '../call/index.js';
import type { WireResponse } from './wire-reader.js';
import { writeModelInferRequest } from './wire-writer.js';

// Without it a decoupled model that ends without data sends nothing, and the end of a request
// cannot be told (tensorrtllm_backend #552); with it every request ends on a flagged response.
export const STREAM_PARAMETERS = { triton_enable_empty_final_response: true } as const;

/** A streamed request as it goes on the wire: encoded, compressed when worth it, framed, checked against the limit. */
export function encodeStreamRequest(
  request: InferRequest,
  settings: { readonly gzip: boolean; readonly maxSendBytes: number | undefined },
): Buffer {
  return encodeFramed(writeModelInferRequest(request, STREAM_PARAMETERS), settings);
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
