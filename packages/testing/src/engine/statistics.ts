/** Per-model request counts for ModelStatistics and `/stats`. */

export interface ModelCounts {
  success: number;
  successNs: number;
  fail: number;
  failNs: number;
  lastInference: number;
}

export class Statistics {
  private counts = new Map<string, ModelCounts>();

  get(model: string): ModelCounts {
    let c = this.counts.get(model);
    if (!c) {
      c = { success: 0, successNs: 0, fail: 0, failNs: 0, lastInference: 0 };
      this.counts.set(model, c);
    }
    return c;
  }

  record(model: string, ok: boolean, startedMs: number): void {
    const c = this.get(model);
    const now = Date.now();
    const ns = Math.max(0, now - startedMs) * 1e6;
    if (ok) {
      c.success++;
      c.successNs += ns;
    } else {
      c.fail++;
      c.failNs += ns;
    }
    c.lastInference = now;
  }
}
