/**
 * perf_analyzer's profile export (the 2.50 format genai-perf 0.0.16 reads): per request, the time it
 * was sent and the time of every response, on the system clock in nanoseconds. The null final
 * response of a stream (`triton_enable_empty_final_response`) is listed too, with an empty
 * `text_output`.
 */
import { readFile } from 'node:fs/promises';

interface ExportRequest {
  readonly timestamp: number;
  readonly response_timestamps: readonly number[];
  readonly response_outputs: readonly { readonly text_output?: string }[];
}

interface ExportFile {
  readonly experiments: readonly { readonly requests: readonly ExportRequest[] }[];
}

/** One request as perf_analyzer timed it, in milliseconds on its clock. */
export interface RequestTiming {
  readonly sentMs: number;
  /** Responses that carry text: one per token on the ensemble. */
  readonly tokenMs: readonly number[];
  /** The last response of any kind (the null final one when it came apart). */
  readonly lastResponseMs: number;
  /** The streamed text, joined. */
  readonly text: string;
}

export async function readProfileExport(path: string): Promise<RequestTiming[]> {
  const file = JSON.parse(await readFile(path, 'utf8')) as ExportFile;
  const requests = file.experiments.flatMap((e) => e.requests);
  return requests.map((r) => {
    const tokens: number[] = [];
    let text = '';
    r.response_timestamps.forEach((ns, i) => {
      const out = r.response_outputs[i]?.text_output;
      if (out !== undefined && out !== '') {
        tokens.push(ns / 1e6);
        text += out;
      }
    });
    return {
      sentMs: r.timestamp / 1e6,
      tokenMs: tokens,
      lastResponseMs: (r.response_timestamps.at(-1) ?? r.timestamp) / 1e6,
      text,
    };
  });
}

/** Time to first token of a request: sent to its first token response. */
export function ttft(r: RequestTiming): number | undefined {
  const first = r.tokenMs[0];
  return first === undefined ? undefined : first - r.sentMs;
}

/** Mean inter-token latency of a request: first to last token response over the tokens after the first. */
export function itl(r: RequestTiming): number | undefined {
  const n = r.tokenMs.length;
  return n < 2 ? undefined : (r.tokenMs[n - 1]! - r.tokenMs[0]!) / (n - 1);
}

/** Wall time of a set of requests: first sent to last response. */
export function spanMs(requests: readonly RequestTiming[]): number {
  const start = Math.min(...requests.map((r) => r.sentMs));
  const end = Math.max(...requests.map((r) => r.lastResponseMs));
  return end - start;
}

export function defined(values: readonly (number | undefined)[]): number[] {
  return values.filter((v): v is number => v !== undefined);
}
