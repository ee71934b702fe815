import { TritonLlmError } from '../errors.js';
import type { GenerationEvent } from '../generation/events.js';
import type { GenerateResult } from '../result.js';
import type { TelemetryAttributes, TelemetrySpan } from './api.js';
import type { GenAiMetrics } from './metrics.js';
import type { TraceContextInjector } from './trace-context.js';

// `SpanStatusCode.ERROR` of the api, written out so core never loads it.
const ERROR = 2;

/** What one request's recorder needs from its client. */
export interface RequestTelemetryContext {
  readonly span: TelemetrySpan | undefined;
  readonly metrics: GenAiMetrics | undefined;
  readonly inject: TraceContextInjector | undefined;
  /** The client's attributes (operation, provider, model, server). */
  readonly attributes: TelemetryAttributes;
  readonly streaming: boolean;
}

/**
 * The span and metrics of one request, from its start to its one end: a result (`end` event), an
 * error (`error` event, or a failure before the generation ran), or the consumer leaving a stream
 * early. Whichever comes first ends it; the rest are ignored.
 */
export class RequestTelemetry {
  private readonly started = performance.now();
  private ended = false;

  constructor(private readonly ctx: RequestTelemetryContext) {}

  /** The call's headers plus the span's trace context, so Triton's own trace joins this span. */
  headers(base: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> | undefined {
    const { span, inject } = this.ctx;
    if (span === undefined || inject === undefined) return base;
    const headers: Record<string, string> = { ...base };
    try {
      inject(span, headers);
    } catch (err) {
      // Telemetry must never fail a request: it goes out without trace context, and the span says why.
      span.addEvent('trace_context_not_sent', { 'error.type': err instanceof Error ? err.name : typeof err });
      return base;
    }
    return headers;
  }

  /** Takes the generation's lifecycle events; the user's `onEvent` still gets every one. */
  observe(event: GenerationEvent): void {
    switch (event.type) {
      case 'end':
        this.succeed(event.result);
        break;
      case 'error':
        this.fail(event.error);
        break;
      case 'retry':
        this.ctx.span?.addEvent('retry', {
          'trtllm.retry.attempt': event.attempt,
          'trtllm.retry.delay_ms': event.delayMs,
          'error.type': event.error.code,
        });
        break;
    }
  }

  /** `work`, with its failure ending the request (the failures no `error` event reports). */
  async track<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      this.fail(err);
      throw err;
    }
  }

  /** Ends the request with an error (idempotent: an `error` event may have ended it already). */
  fail(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const error = TritonLlmError.from(err, 'unknown');
    const { span } = this.ctx;
    if (span !== undefined) {
      if (error.requestId !== undefined) span.setAttribute('gen_ai.response.id', error.requestId);
      if (error.earlyStop !== undefined) span.setAttributes(earlyStopAttributes(error.earlyStop));
      span.setAttribute('error.type', error.code);
      span.recordException(error);
      span.setStatus({ code: ERROR, message: error.message });
      span.end();
    }
    this.ctx.metrics?.record(
      { ...this.ctx.attributes, 'error.type': error.code },
      this.elapsedSeconds(),
      this.ctx.streaming,
      undefined,
    );
  }

  /**
   * The consumer left the stream before its final chunk: the SDK cancelled the request and no
   * result exists. Recorded as the cancel it is, with no token counts rather than wrong ones.
   */
  abandon(): void {
    if (this.ended) return;
    this.ended = true;
    const { span } = this.ctx;
    if (span !== undefined) {
      span.setAttributes({
        'gen_ai.response.finish_reasons': ['cancelled'],
        'trtllm.early_stop.trigger': 'break',
      });
      span.end();
    }
    this.ctx.metrics?.record(this.ctx.attributes, this.elapsedSeconds(), this.ctx.streaming, undefined);
  }

  private succeed(result: GenerateResult): void {
    if (this.ended) return;
    this.ended = true;
    const { span } = this.ctx;
    const attributes = { ...this.ctx.attributes, 'gen_ai.response.model': result.model };
    if (span !== undefined) {
      const { usage, timings } = result;
      span.setAttributes({
        'gen_ai.response.id': result.requestId,
        'gen_ai.response.model': result.model,
        'gen_ai.response.finish_reasons': result.sequences.length
          ? result.sequences.map((s) => s.finishReason)
          : [result.finishReason],
      });
      if (usage.promptTokens !== undefined)
        span.setAttribute('gen_ai.usage.input_tokens', usage.promptTokens);
      if (usage.completionTokens !== undefined)
        span.setAttribute('gen_ai.usage.output_tokens', usage.completionTokens);
      if (this.ctx.streaming && timings.timeToFirstTokenMs !== undefined)
        span.setAttribute('gen_ai.response.time_to_first_chunk', timings.timeToFirstTokenMs / 1000);
      if (result.earlyStop !== undefined) span.setAttributes(earlyStopAttributes(result.earlyStop));
      span.end();
    }
    this.ctx.metrics?.record(attributes, this.elapsedSeconds(), this.ctx.streaming, result);
  }

  private elapsedSeconds(): number {
    return (performance.now() - this.started) / 1000;
  }
}

function earlyStopAttributes(report: NonNullable<GenerateResult['earlyStop']>): TelemetryAttributes {
  return {
    'trtllm.early_stop.trigger': report.trigger,
    'trtllm.early_stop.via': [...report.via],
    'trtllm.early_stop.server_stops_generating': report.serverStopsGenerating,
  };
}
