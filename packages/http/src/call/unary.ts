import type { Exchange, ResponseHandler, ResponseHead } from '../engine/index.js';
import { concat, tooLarge } from './body.js';
import type { Call } from './call.js';

/** A unary call's answer, read whole. */
export interface Answer {
  readonly status: number;
  readonly headers: ResponseHead['headers'];
  readonly body: Uint8Array;
}

/** How much of an answer's body {@link WholeAnswer} reads. */
export interface BodyLimits {
  /** Of a 2xx answer (`maxResponseBytes`): a larger one fails with `resource_exhausted`. */
  readonly ok: number | undefined;
  /** Of any other answer, read only to quote it: a larger one is answered by its status alone. */
  readonly error: number;
  /** The status is the whole answer (a health probe): a body that fails to arrive changes nothing. */
  readonly statusOnly?: boolean;
}

/**
 * Reads one answer whole, refusing a body larger than its limit as soon as it is known to be
 * (from Content-Length, or while reading) and aborting the exchange then. The call's abort aborts
 * the exchange and fails the answer with the call's reason.
 */
export class WholeAnswer implements ResponseHandler {
  exchange: Exchange | undefined;
  private head: ResponseHead | undefined;
  private limit: number | undefined;
  private readonly chunks: Uint8Array[] = [];
  private total = 0;
  private settled = false;

  constructor(
    private readonly call: Call,
    private readonly limits: BodyLimits,
    private readonly resolve: (answer: Answer) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    call.onAbort(() => this.onAbort());
  }

  onHead(head: ResponseHead): void {
    this.head = head;
    const ok = head.status >= 200 && head.status < 300;
    this.limit = ok ? this.limits.ok : this.limits.error;
    const declared = Number(head.headers.get('content-length') ?? Number.NaN);
    if (this.limit !== undefined && declared > this.limit) this.tooLarge(ok);
  }

  onBody(bytes: Uint8Array, from: number, to: number): void {
    if (this.settled) return;
    this.total += to - from;
    const head = this.head as ResponseHead;
    if (this.limit !== undefined && this.total > this.limit) {
      this.tooLarge(head.status >= 200 && head.status < 300);
      return;
    }
    // Copied: an engine may reuse its read buffer.
    this.chunks.push(bytes.slice(from, to));
  }

  onEnd(): void {
    this.answer(concat(this.chunks, this.total));
  }

  onError(error: unknown): void {
    if (this.head !== undefined && this.limits.statusOnly === true) this.answer(new Uint8Array(0));
    else this.fail(this.call.failure(error));
  }

  private onAbort(): void {
    // A probe's answer is its status: once that arrived, the body no longer matters.
    if (this.head !== undefined && this.limits.statusOnly === true) {
      this.exchange?.abort();
      this.answer(new Uint8Array(0));
    } else {
      this.fail(this.call.failure(undefined));
    }
  }

  /** Too large: a 2xx body fails; any other answer (or a probe's) keeps its status alone. */
  private tooLarge(ok: boolean): void {
    this.exchange?.abort();
    if (ok && this.limits.statusOnly !== true) this.fail(tooLarge(this.call.context, this.limit as number));
    else this.answer(new Uint8Array(0));
  }

  private answer(body: Uint8Array): void {
    if (this.settled) return;
    this.settled = true;
    const { status, headers } = this.head as ResponseHead;
    this.resolve({ status, headers, body });
  }

  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.exchange?.abort();
    this.reject(error);
  }
}
