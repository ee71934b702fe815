/**
 * `ensemble` and `tensorrt_llm_bls`: text in, text out over the generator. Their inner generation
 * ignores the client's cancellation and runs to its end, as on Triton 2.51 (the ensemble scheduler
 * checks only between steps; the BLS model does not pass cancellation on).
 */
import { randomUUID } from 'node:crypto';
import { TritonError } from '../errors.js';
import type { ModelDef } from '../models/repository.js';
import { fp32Tensor, type Tensor, textTensor } from '../tensor.js';
import { decode, encode } from '../vocabulary.js';
import { batchSize, splitBatch, stackResponses } from './batch.js';
import type { EngineContext } from './context.js';
import { refuse } from './finish.js';
import { Generation, type GenerationItem, type GenerationOutcome, type TokenStep } from './generation.js';
import { generatorRefusal } from './generator-model.js';
import { excludesInput, sharedOptions } from './generator-options.js';
import { boolInput, type Inputs, intInput, textsInput } from './inputs.js';
import { extraOutputs, modelOutputs, sequenceIndexTensor } from './outputs.js';
import type { Delivery, InferenceRequest, ModelResponse, ResponseSink } from './request.js';
import { guideOf, scriptOption, scriptParameter, testHooks } from './test-hooks.js';

function words(inputs: Inputs, name: string): number[][] {
  return (textsInput(inputs, name) ?? []).map(encode).filter((w) => w.length > 0);
}

/** What one request (or batch item) of a text model asks its generator for. */
interface TextItem extends GenerationItem {
  readonly inputs: Inputs;
  readonly streaming: boolean;
  /** The ids the output text starts with (the prompt, unless excluded). */
  readonly prefix: readonly number[];
}

function textItem(inputs: Inputs, inner: ModelDef, scriptParam: string | undefined): TextItem {
  const prompt = textsInput(inputs, 'text_input')?.[0] ?? '';
  const inputIds = encode(prompt);
  const hooks = testHooks(prompt, inputs, scriptParam);
  return {
    inputs,
    inputIds,
    options: {
      ...sharedOptions(inputs),
      maxTokens: intInput(inputs, 'max_tokens') ?? 0,
      stopWords: words(inputs, 'stop_words'),
      badWords: words(inputs, 'bad_words'),
      ...scriptOption(hooks),
    },
    streaming: boolInput(inputs, 'stream') ?? false,
    prefix: excludesInput(inputs, inner.parameters) ? [] : inputIds,
  };
}

/** The client-facing side of one ensemble or BLS request: open until completed, failed or cancelled. */
class OuterRequest {
  private open = true;
  private forwarded = 0;
  private readonly req: InferenceRequest;
  private readonly sink: ResponseSink;
  private readonly ctx: EngineContext;
  private readonly guide: string | undefined;

  constructor(req: InferenceRequest, sink: ResponseSink, ctx: EngineContext, guide: string | undefined) {
    this.req = req;
    this.sink = sink;
    this.ctx = ctx;
    this.guide = guide;
    this.log('received');
    // The model object is the listener, removed again on close: requests of one multiplexed call
    // share its signal, and a long call must not collect a listener per request.
    sink.signal.addEventListener('abort', this, { once: true });
  }

  /** The call was cancelled under the request. */
  handleEvent(): void {
    this.close('cancelled');
  }

  /** Forwards a response while the client is there; afterwards drops it and lets the generator run on. */
  async send(response: ModelResponse): Promise<Delivery> {
    if (!this.open) return 'ok';
    const delivery = await this.sink.send(response);
    if (delivery === 'ok') this.forwarded += response.tokens;
    else this.close(delivery === 'cancelled' ? 'cancelled' : 'error');
    return 'ok';
  }

  get isOpen(): boolean {
    return this.open;
  }

  finish(outcome: GenerationOutcome): void {
    if (!this.open) return;
    if (outcome.kind === 'error') {
      this.close('error');
      this.sink.fail(outcome.error);
    } else if (outcome.kind === 'completed' || outcome.kind === 'stopped') {
      this.close('completed');
      this.sink.complete();
    } else {
      this.close('cancelled');
    }
  }

  private close(event: 'completed' | 'cancelled' | 'error'): void {
    if (!this.open) return;
    this.open = false;
    this.sink.signal.removeEventListener('abort', this);
    this.log(event);
  }

  private log(event: 'received' | 'completed' | 'cancelled' | 'error'): void {
    const { model, id, protocol } = this.req;
    const guide = event === 'received' && this.guide !== undefined ? { guide: this.guide } : {};
    this.ctx.events.record({ model: model.name, id, event, tokens: this.forwarded, protocol, ...guide });
  }
}

export async function executeTextModel(
  req: InferenceRequest,
  sink: ResponseSink,
  ctx: EngineContext,
): Promise<void> {
  const { model, inputs } = req;
  const generator = model.generator ?? '';
  const inner: ModelDef | undefined = ctx.models.get(generator);
  const official = model.innerRequestId === 'fresh';
  if (!inner) {
    if (ctx.control.defined(generator) === undefined) {
      return refuse(req, sink, ctx, new TritonError('INTERNAL', `no generator for '${model.name}'`));
    }
    // Unloaded under explicit model control: Triton keeps a BLS ready (it cannot know which models
    // a BLS calls), and each request fails on its call. (An ensemble was unloaded with it.)
    const message = `Model ${generator} - Error when running inference: Failed for execute the inference request. Model '${generator}' is not ready.`;
    return refuse(req, sink, ctx, new TritonError(official ? 'INTERNAL' : 'UNAVAILABLE', message));
  }
  const guide = guideOf(inputs);
  const outer = new OuterRequest(req, sink, ctx, guide);
  const innerId = official ? randomUUID() : req.id;
  const innerRefusal = (error: TritonError): void => {
    const base = { model: inner.name, id: innerId, tokens: 0, protocol: req.protocol } as const;
    ctx.events.record({ ...base, event: 'received', ...(guide !== undefined ? { guide } : {}) });
    ctx.events.record({ ...base, event: 'error' });
    // The official BLS raises on an inner error and answers every exception as INTERNAL.
    outer.finish({ kind: 'error', error: official ? new TritonError('INTERNAL', error.message) : error });
  };
  let items: TextItem[];
  try {
    const scriptParam = scriptParameter(req.parameters);
    items = splitBatch(inputs, batchSize(inputs)).map((row) => textItem(row, inner, scriptParam));
  } catch (err) {
    if (err instanceof TritonError) return innerRefusal(err);
    throw err;
  }
  for (const item of items) {
    const refusal = generatorRefusal(inner.decoupled, item.streaming, item.options.beamWidth ?? 1);
    if (refusal) return innerRefusal(refusal);
  }
  // Only a decoupled model streams, and it takes one item: streaming is about item 0.
  const streaming = items[0]?.streaming ?? false;

  const generation = new Generation(
    {
      model: inner.name,
      id: innerId,
      protocol: req.protocol,
      items,
      stoppable: true,
      errorAfterTokens: req.faults.errorAfterTokens,
      signal: undefined,
      arrivalMs: req.arrivalMs,
      guide,
    },
    ctx,
  );

  // The ensemble's responses are its generator's, final flag included (on the last one that carries
  // tensors); the official BLS sends every response it decodes and then a flags-only final.
  const flagsLast = model.kind === 'ensemble';
  const streamed = (step: TokenStep, final: boolean): ModelResponse => {
    const seq = generation.items[step.item]![step.k]!;
    // Per-token decoding is what breaks multi-byte characters into U+FFFD on the real server.
    const text = model.accumulateTokens ? decode(seq.tokens) : decode([step.token]);
    const values: Record<string, Tensor> = {
      text_output: textTensor('text_output', [1, 1], [text]),
      cum_log_probs: fp32Tensor('cum_log_probs', [1, 1], [seq.cumLogProb]),
      output_log_probs: fp32Tensor('output_log_probs', [1, 1, 1], [step.logProb]),
      sequence_index: sequenceIndexTensor(step.k),
    };
    return {
      outputs: modelOutputs(
        model,
        values,
        generation.timing(step.item),
        extraOutputs(items[step.item]!, seq.tokens.length),
      ),
      tokens: 1,
      final,
    };
  };

  const whole = (b: number, ks: readonly number[], final: boolean): ModelResponse => {
    const item = items[b]!;
    const seqs = ks.map((k) => generation.items[b]![k]!);
    const width = Math.max(0, ...seqs.map((s) => s.logProbs.length));
    const logProbs = seqs.flatMap((s) => [
      ...s.logProbs,
      ...Array<number>(width - s.logProbs.length).fill(0),
    ]);
    const values: Record<string, Tensor> = {
      text_output: textTensor(
        'text_output',
        [1, seqs.length],
        seqs.map((s) => decode([...item.prefix, ...s.tokens])),
      ),
      cum_log_probs: fp32Tensor(
        'cum_log_probs',
        [1, seqs.length],
        seqs.map((s) => s.cumLogProb),
      ),
      output_log_probs: fp32Tensor('output_log_probs', [1, seqs.length, width], logProbs),
      sequence_index: sequenceIndexTensor(ks.length === 1 ? ks[0]! : 0),
    };
    const tokens = seqs.reduce((n, s) => n + s.tokens.length, 0);
    const outputs = modelOutputs(
      model,
      values,
      generation.timing(b),
      extraOutputs(item, seqs[0]?.tokens.length ?? 0),
    );
    return { outputs, tokens, final };
  };

  const outcome = await generation.run(async (round) => {
    if (!streaming) return 'ok';
    const ends = flagsLast && round.every((step) => step.last);
    for (let i = 0; i < round.length; i++)
      await outer.send(streamed(round[i]!, ends && i === round.length - 1));
    return 'ok';
  });
  if (outer.isOpen && !streaming && (outcome.kind === 'completed' || outcome.kind === 'stopped')) {
    const all = (b: number) => generation.items[b]!.map((_, k) => k);
    const first = items[0];
    const perSequence =
      model.decoupled && (first?.options.beamWidth ?? 1) <= 1 && generation.sequences.length > 1;
    const ks = all(0);
    if (perSequence) for (const k of ks) await outer.send(whole(0, [k], flagsLast && k === ks.at(-1)));
    else
      await outer.send(stackResponses(items.map((_, b) => whole(b, all(b), flagsLast || !model.decoupled))));
  }
  // The official BLS decodes every inner response: a streamed inner request that generates nothing
  // (its first token is end_id) ends with a flags-only final, and the official model fails on it
  // before its first response, INTERNAL, as on Triton 2.51 (GENERATOR.md).
  const nothing = generation.items.every((seqs) => seqs.every((seq) => seq.tokens.length === 0));
  if (official && streaming && outcome.kind === 'completed' && nothing) {
    return outer.finish({
      kind: 'error',
      error: new TritonError('INTERNAL', 'Expected output_ids tensor to have 3 dims.'),
    });
  }
  outer.finish(outcome);
}
