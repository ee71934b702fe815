/**
 * The raw `tensorrt_llm` model (and its non-decoupled twin): token ids in, token ids out. The twin
 * takes batches: each row is generated as a request of its own, all rows in one generation.
 */
import { TritonError } from '../errors.js';
import type { ModelDef } from '../models/repository.js';
import { fp32Tensor, int32Tensor, type Tensor } from '../tensor.js';
import { decode, END_ID } from '../vocabulary.js';
import { batchSize, splitBatch, stackResponses } from './batch.js';
import type { EngineContext } from './context.js';
import { answerEmpty, refuse } from './finish.js';
import { Generation, type GenerationItem, type GenerationOutcome, type TokenStep } from './generation.js';
import { excludesInput, sharedOptions } from './generator-options.js';
import { boolInput, type Inputs, intInput, intsInput, wordListInput } from './inputs.js';
import { extraOutputs, modelOutputs, sequenceIndexTensor } from './outputs.js';
import type { Delivery, InferenceRequest, ModelResponse, ResponseSink } from './request.js';
import { guideOf, scriptOption, scriptParameter, testHooks } from './test-hooks.js';

export const STREAMING_NEEDS_DECOUPLED =
  'Streaming is only supported if model is deployed using decoupled mode.';
export const NO_BEAMS_WHEN_STREAMING = 'Beam search (beam_width > 1) is not supported with streaming.';

/** The checks the generator itself makes before it starts. */
export function generatorRefusal(
  decoupled: boolean,
  streaming: boolean,
  beamWidth: number,
): TritonError | undefined {
  if (streaming && !decoupled) return new TritonError('INVALID_ARG', STREAMING_NEEDS_DECOUPLED);
  if (streaming && beamWidth > 1) return new TritonError('INVALID_ARG', NO_BEAMS_WHEN_STREAMING);
  return undefined;
}

function padRows(rows: readonly (readonly number[])[], pad: number): { width: number; flat: number[] } {
  const width = Math.max(0, ...rows.map((r) => r.length));
  const flat: number[] = [];
  for (const r of rows) {
    flat.push(...r);
    for (let i = r.length; i < width; i++) flat.push(pad);
  }
  return { width, flat };
}

/** What one request (or batch item) of the raw model asks for. */
interface GeneratorItem extends GenerationItem {
  readonly inputs: Inputs;
  readonly streaming: boolean;
  readonly endId: number;
  /** The ids the output starts with (the prompt, unless excluded). */
  readonly prefix: readonly number[];
}

function generatorItem(inputs: Inputs, model: ModelDef, scriptParam: string | undefined): GeneratorItem {
  // A batch row of input_ids holds input_lengths real ids, then padding.
  const allIds = intsInput(inputs, 'input_ids') ?? [];
  const inputIds = allIds.slice(0, Math.max(0, intInput(inputs, 'input_lengths') ?? allIds.length));
  // The vocabulary is byte-level, so a marker the client tokenized decodes back intact.
  const hooks = testHooks(decode(inputIds), inputs, scriptParam);
  const options = {
    ...sharedOptions(inputs),
    maxTokens: intInput(inputs, 'request_output_len') ?? 0,
    stopWords: wordListInput(inputs, 'stop_words_list'),
    badWords: wordListInput(inputs, 'bad_words_list'),
    ...scriptOption(hooks),
  };
  return {
    inputs,
    inputIds,
    options,
    streaming: boolInput(inputs, 'streaming') ?? false,
    endId: options.endId ?? END_ID,
    prefix: excludesInput(inputs, model.parameters) ? [] : inputIds,
  };
}

export async function executeGenerator(
  req: InferenceRequest,
  sink: ResponseSink,
  ctx: EngineContext,
): Promise<void> {
  const { inputs, model } = req;
  const rows = splitBatch(inputs, batchSize(inputs));
  if (rows.some((row) => boolInput(row, 'stop') === true)) {
    ctx.stops.stop(model.name, req.id);
    return answerEmpty(req, sink);
  }
  const guide = guideOf(inputs);
  let items: GeneratorItem[];
  try {
    const scriptParam = scriptParameter(req.parameters);
    items = rows.map((row) => generatorItem(row, model, scriptParam));
  } catch (err) {
    if (err instanceof TritonError) return refuse(req, sink, ctx, err, guide);
    throw err;
  }
  for (const item of items) {
    const refusal = generatorRefusal(model.decoupled, item.streaming, item.options.beamWidth ?? 1);
    if (refusal) return refuse(req, sink, ctx, refusal, guide);
  }
  // Only a decoupled model streams, and it takes one item: streaming is about item 0.
  const streaming = items[0]?.streaming ?? false;
  const generation = new Generation(
    {
      model: model.name,
      id: req.id,
      protocol: req.protocol,
      items,
      stoppable: true,
      errorAfterTokens: req.faults.errorAfterTokens,
      signal: sink.signal,
      arrivalMs: req.arrivalMs,
      guide,
    },
    ctx,
  );

  const streamStep = (step: TokenStep, final: boolean): Promise<Delivery> => {
    const seq = generation.items[step.item]![step.k]!;
    const outputs = modelOutputs(
      model,
      {
        output_ids: int32Tensor('output_ids', [1, 1, 1], [step.token]),
        sequence_length: int32Tensor('sequence_length', [1, 1], [1]),
        cum_log_probs: fp32Tensor('cum_log_probs', [1, 1], [seq.cumLogProb]),
        output_log_probs: fp32Tensor('output_log_probs', [1, 1, 1], [step.logProb]),
        sequence_index: sequenceIndexTensor(step.k),
      },
      generation.timing(step.item),
      extraOutputs(items[step.item]!, seq.tokens.length),
    );
    return sink.send({ outputs, tokens: 1, final });
  };

  const wholeResponse = (b: number, ks: readonly number[], final: boolean): ModelResponse => {
    const item = items[b]!;
    const seqs = ks.map((k) => generation.items[b]![k]!);
    const ids = padRows(
      seqs.map((s) => [...item.prefix, ...s.tokens]),
      item.endId,
    );
    const logProbs = padRows(
      seqs.map((s) => s.logProbs),
      0,
    );
    const beams = seqs.length;
    const values: Record<string, Tensor> = {
      output_ids: int32Tensor('output_ids', [1, beams, ids.width], ids.flat),
      sequence_length: int32Tensor(
        'sequence_length',
        [1, beams],
        seqs.map((s) => item.prefix.length + s.tokens.length),
      ),
      cum_log_probs: fp32Tensor(
        'cum_log_probs',
        [1, beams],
        seqs.map((s) => s.cumLogProb),
      ),
      output_log_probs: fp32Tensor('output_log_probs', [1, beams, logProbs.width], logProbs.flat),
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
    // As the C++ backend does, the final flag rides on the last response that carries tensors: the
    // official BLS post-processes every response it gets, and an empty final one breaks it.
    const ends = round.every((step) => step.last);
    for (let i = 0; i < round.length; i++) {
      const delivery = await streamStep(round[i]!, ends && i === round.length - 1);
      if (delivery !== 'ok') return delivery;
    }
    return 'ok';
  });
  await finishGeneration(outcome, sink, async () => {
    if (streaming) return 'ok';
    const all = (b: number) => generation.items[b]!.map((_, k) => k);
    // Separate sequences (not beams) of a decoupled model come one response each.
    const first = items[0];
    const perSequence =
      model.decoupled && (first?.options.beamWidth ?? 1) <= 1 && generation.sequences.length > 1;
    if (!perSequence) {
      const responses = items.map((_, b) => wholeResponse(b, all(b), true));
      // Each item's output ids are padded with its own end id, as within the item.
      return sink.send(
        stackResponses(responses, (name, b) => (name === 'output_ids' ? items[b]?.endId : undefined)),
      );
    }
    const ks = all(0);
    for (const k of ks) {
      const delivery = await sink.send(wholeResponse(0, [k], k === ks.at(-1)));
      if (delivery !== 'ok') return delivery;
    }
    return 'ok';
  });
}

/** After the generator ends: the held-back responses of a finished request, then its end. */
export async function finishGeneration(
  outcome: GenerationOutcome,
  sink: ResponseSink,
  sendHeldBack: () => Promise<Delivery>,
): Promise<void> {
  if (outcome.kind === 'error') return sink.fail(outcome.error);
  if (outcome.kind !== 'completed' && outcome.kind !== 'stopped') return;
  if ((await sendHeldBack()) !== 'ok') return;
  sink.complete();
}
