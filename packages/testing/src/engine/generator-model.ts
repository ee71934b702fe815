/** The raw `tensorrt_llm` model (and its non-decoupled twin): token ids in, token ids out. */
import { TritonError } from '../errors.js';
import { fp32Tensor, int32Tensor, type Tensor } from '../tensor.js';
import { END_ID } from '../vocabulary.js';
import type { EngineContext } from './context.js';
import { answerEmpty, refuse } from './finish.js';
import { Generation, type GenerationOutcome, type TokenStep } from './generation.js';
import { excludesInput, sharedOptions } from './generator-options.js';
import { boolInput, intInput, intsInput, wordListInput } from './inputs.js';
import { type ExtraOutputs, modelOutputs, sequenceIndexTensor } from './outputs.js';
import type { Delivery, InferenceRequest, ResponseSink } from './request.js';

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

export async function executeGenerator(
  req: InferenceRequest,
  sink: ResponseSink,
  ctx: EngineContext,
): Promise<void> {
  const { inputs, model } = req;
  if (boolInput(inputs, 'stop') === true) {
    ctx.stops.stop(model.name, req.id);
    return answerEmpty(req, sink);
  }
  const allIds = intsInput(inputs, 'input_ids') ?? [];
  const inputIds = allIds.slice(0, Math.max(0, intInput(inputs, 'input_lengths') ?? allIds.length));
  const shared = sharedOptions(inputs);
  const options = {
    ...shared,
    maxTokens: intInput(inputs, 'request_output_len') ?? 0,
    stopWords: wordListInput(inputs, 'stop_words_list'),
    badWords: wordListInput(inputs, 'bad_words_list'),
  };
  const streaming = boolInput(inputs, 'streaming') ?? false;
  const refusal = generatorRefusal(model.decoupled, streaming, options.beamWidth ?? 1);
  if (refusal) return refuse(req, sink, ctx, refusal);

  const endId = options.endId ?? END_ID;
  const prefix = excludesInput(inputs, model.parameters) ? [] : inputIds;
  const extraFor = (outputTokens: number): ExtraOutputs => ({
    perfMetrics: boolInput(inputs, 'return_perf_metrics') ?? false,
    numInputTokens: boolInput(inputs, 'return_num_input_tokens') ? inputIds.length : undefined,
    numOutputTokens: boolInput(inputs, 'return_num_output_tokens') ? outputTokens : undefined,
  });
  const generation = new Generation(
    {
      model: model.name,
      id: req.id,
      protocol: req.protocol,
      inputIds,
      options,
      stoppable: true,
      errorAfterTokens: req.faults.errorAfterTokens,
      signal: sink.signal,
    },
    ctx,
  );

  const streamStep = (step: TokenStep): Promise<Delivery> => {
    const seq = generation.sequences[step.k]!;
    const outputs = modelOutputs(
      model,
      {
        output_ids: int32Tensor('output_ids', [1, 1, 1], [step.token]),
        sequence_length: int32Tensor('sequence_length', [1, 1], [1]),
        cum_log_probs: fp32Tensor('cum_log_probs', [1, 1], [seq.cumLogProb]),
        output_log_probs: fp32Tensor('output_log_probs', [1, 1, 1], [step.logProb]),
        sequence_index: sequenceIndexTensor(step.k),
      },
      generation,
      extraFor(seq.tokens.length),
    );
    return sink.send({ outputs, tokens: 1, final: false });
  };

  const wholeResponse = (ks: readonly number[], final: boolean) => {
    const seqs = ks.map((k) => generation.sequences[k]!);
    const ids = padRows(
      seqs.map((s) => [...prefix, ...s.tokens]),
      endId,
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
        seqs.map((s) => prefix.length + s.tokens.length),
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
    const outputs = modelOutputs(model, values, generation, extraFor(seqs[0]?.tokens.length ?? 0));
    return { outputs, tokens, final };
  };

  const outcome = await generation.run(async (round) => {
    if (!streaming) return 'ok';
    for (const step of round) {
      const delivery = await streamStep(step);
      if (delivery !== 'ok') return delivery;
    }
    return 'ok';
  });
  await finishGeneration(outcome, sink, async () => {
    if (streaming) return 'ok';
    const all = generation.sequences.map((_, k) => k);
    // Separate sequences (not beams) of a decoupled model come one response each.
    const perSequence = model.decoupled && (options.beamWidth ?? 1) <= 1 && all.length > 1;
    if (!perSequence) return sink.send(wholeResponse(all, !model.decoupled));
    for (const k of all) {
      const delivery = await sink.send(wholeResponse([k], false));
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
