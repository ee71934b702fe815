/** Injected faults: which apply to a request, and when each fires. */
import { TritonError } from '../errors.js';
import type { FakeFaults } from '../types.js';

/** A fault the front end acts out on the wire instead of sending a response. */
export type TransportFault = 'drop' | 'malformed' | 'stall';

/** The faults of one request, fixed when it arrives. */
export class FaultPlan {
  readonly errorAfterTokens: number | undefined;
  readonly omitFinal: boolean;
  private readonly transport: readonly { readonly kind: TransportFault; readonly after: number }[];

  constructor(faults: FakeFaults | undefined) {
    this.errorAfterTokens = faults?.errorAfterTokens;
    this.omitFinal = faults?.omitFinalResponse ?? false;
    const transport: { kind: TransportFault; after: number }[] = [];
    if (faults?.dropConnectionAfterTokens !== undefined)
      transport.push({ kind: 'drop', after: faults.dropConnectionAfterTokens });
    if (faults?.malformedAfterTokens !== undefined)
      transport.push({ kind: 'malformed', after: faults.malformedAfterTokens });
    if (faults?.stallAfterTokens !== undefined)
      transport.push({ kind: 'stall', after: faults.stallAfterTokens });
    this.transport = transport.sort((a, b) => a.after - b.after);
  }

  /** The fault to act out instead of a response carrying `tokens` more after `delivered`. */
  beforeResponse(delivered: number, tokens: number): TransportFault | undefined {
    return this.transport.find((f) => delivered + tokens > f.after)?.kind;
  }
}

export const NO_FAULTS = new FaultPlan(undefined);

/** The faults a test set, handed out per request. */
export class FaultState {
  private faults: FakeFaults | undefined;

  set(faults: FakeFaults | undefined): void {
    this.faults = faults;
  }

  /**
   * The plan for a new inference request to `model`; throws the `statusOnce` error (spending it)
   * when that applies.
   */
  admit(model: string): FaultPlan {
    const faults = this.faults;
    if (!faults || (faults.model !== undefined && faults.model !== model)) return NO_FAULTS;
    if (faults.statusOnce) {
      const { grpc, http, message } = faults.statusOnce;
      const { statusOnce: _, ...rest } = faults;
      this.faults = rest;
      throw new TritonError('UNKNOWN', message, { grpc, http });
    }
    return new FaultPlan(faults);
  }
}
