import { TritonLlmError } from '../errors.js';
import { splitBatchResponse } from '../models/batch.js';
import type { InferResponse } from '../transport.js';

/**
 * One batched request on the wire, shared by the generations of its items. It is sent when the
 * first item asks for its row, and cancelled on the server only when every item has left: the
 * server sees one request, so one item's abort cannot end the others' generation.
 */
export class SharedBatchCall {
  private readonly controller = new AbortController();
  private rows: Promise<InferResponse[]> | undefined;
  private present: number;

  constructor(
    private readonly size: number,
    private readonly send: (signal: AbortSignal) => Promise<InferResponse>,
  ) {
    this.present = size;
  }

  /** Item `index`'s response; aborting `signal` leaves the call with `cancelled`. */
  row(index: number, signal: AbortSignal | undefined): Promise<InferResponse> {
    this.rows ??= this.send(this.controller.signal).then((r) => splitBatchResponse(r, this.size));
    const mine = this.rows.then((rows) => rows[index]!);
    if (signal === undefined) return mine;
    return new Promise<InferResponse>((resolve, reject) => {
      const onAbort = (): void => {
        this.leave();
        reject(new TritonLlmError('cancelled', 'the request was cancelled by the client'));
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      mine.then(
        (response) => {
          signal.removeEventListener('abort', onAbort);
          resolve(response);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      );
    });
  }

  private leave(): void {
    this.present -= 1;
    if (this.present === 0) this.controller.abort();
  }
}
