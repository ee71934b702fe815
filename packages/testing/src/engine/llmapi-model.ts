/**
 * The LLM-API flavor (`all_models/llmapi/tensorrt_llm`): text in, text out. Like the real model it
 * sends cumulative text when streaming (its detokenizer holds back an unfinished character), flags
 * the last data response final, and reports reasons as strings ("None" until known).
 */
import { TritonError } from '../errors.js';
import { fp32Tensor, type Tensor, textTensor } from '../tensor.js';
import { decode, encode, incompleteTailLength, tokenBytes } from '../vocabulary.js';
import type { EngineContext } from './context.js';
import { answerEmpty, refuse } from './finish.js';
import { Generation } from './generation.js';
import { finishGeneration } from './generator-model.js';
import { bigintInput, boolInput, intInput, textsInput } from './inputs.js';
import type { InferenceRequest, ModelResponse, ResponseSink } from './request.js';
import { scriptOption, scriptParameter, testHooks } from './test-hooks.js';

/** SamplingParams' default `max_tokens`. */
const DEFAULT_MAX_TOKENS = 32;
/** Tokens per KV-cache block in the fake's perf metrics. */
const BLOCK_TOKENS = 32;
const utf8 = new TextDecoder('utf-8');

function textSoFar(tokens: readonly number[]): string {
  const bytes = tokenBytes(tokens);
  return utf8.decode(bytes.subarray(0, bytes.length - incompleteTailLength(bytes)));
}

export async function executeLlmApi(
  req: InferenceRequest,
  sink: ResponseSink,
  ctx: EngineContext,
): Promise<void> {
  const { inputs, model } = req;
  if (boolInput(inputs, 'stop') === true) {
    ctx.stops.stop(model.name, req.id);
    return answerEmpty(req, sink);
  }
  const prompt = textsInput(inputs, 'text_input')?.[0] ?? '';
  const inputIds = encode(prompt);
  const stops = (textsInput(inputs, 'sampling_param_stop') ?? []).filter((s) => encode(s).length > 0);
  const seed = bigintInput(inputs, 'sampling_param_seed');
  let hooks: ReturnType<typeof testHooks>;
  try {
    hooks = testHooks(prompt, inputs, scriptParameter(req.parameters));
  } catch (err) {
    if (err instanceof TritonError) return refuse(req, sink, ctx, err);
    throw err;
  }
  const options = {
    maxTokens: intInput(inputs, 'sampling_param_max_tokens') ?? DEFAULT_MAX_TOKENS,
    stopWords: stops.map(encode),
    ...(seed !== undefined ? { seed } : {}),
    returnLogProbs: boolInput(inputs, 'return_cumulative_logprob') ?? false,
    ...scriptOption(hooks),
  };
  const streaming = boolInput(inputs, 'streaming') ?? false;
  if (streaming && !model.decoupled) {
    return refuse(
      req,
      sink,
      ctx,
      new TritonError('INTERNAL', 'Streaming is only supported in decoupled mode.'),
    );
  }
  const prefix = boolInput(inputs, 'sampling_param_exclude_input_from_output') === false ? prompt : '';
  const wants = {
    finish: boolInput(inputs, 'return_finish_reason') ?? false,
    stop: boolInput(inputs, 'return_stop_reason') ?? false,
    logprob: boolInput(inputs, 'return_cumulative_logprob') ?? false,
    metrics: boolInput(inputs, 'sampling_param_return_perf_metrics') ?? false,
  };
  const generation = new Generation(
    {
      model: model.name,
      id: req.id,
      protocol: req.protocol,
      items: [{ inputIds, options }],
      stoppable: true,
      errorAfterTokens: req.faults.errorAfterTokens,
      signal: sink.signal,
      arrivalMs: req.arrivalMs,
    },
    ctx,
  );
  const seq = generation.sequences[0]!;

  const response = (text: string, finished: boolean, tokens: number): ModelResponse => {
    const reason = seq.reason === 'stopped' ? 'cancelled' : (seq.reason ?? 'None');
    const matched = stops.find((s) => {
      const ids = encode(s);
      return seq.tokens.slice(-ids.length).join() === ids.join();
    });
    const outputs: Tensor[] = [textTensor('text_output', [1, 1], [prefix + text])];
    if (wants.finish) outputs.push(textTensor('finish_reason', [1, 1], [finished ? reason : 'None']));
    if (wants.stop) {
      const stopReason = finished && seq.reason === 'stop' && matched !== undefined ? matched : 'None';
      outputs.push(textTensor('stop_reason', [1, 1], [stopReason]));
    }
    if (wants.logprob) outputs.push(fp32Tensor('cumulative_logprob', [1, 1], [seq.cumLogProb]));
    if (wants.metrics && finished) outputs.push(...perfMetrics(inputIds.length + seq.tokens.length));
    return { outputs, tokens, final: finished };
  };

  /**
   * As upstream's model.py builds them: every metric a BYTES string, whatever the config declares
   * (its own sample response shows `"kv_cache_alloc_new_blocks": "1"`). Nothing is cached in the
   * fake, so every block is new and missed.
   */
  const perfMetrics = (tokens: number): Tensor[] => {
    const timing = generation.timing(0);
    const blocks = String(Math.ceil(tokens / BLOCK_TOKENS));
    const values: Record<string, string> = {
      kv_cache_reused_block: '0',
      kv_cache_missed_block: blocks,
      kv_cache_alloc_new_blocks: blocks,
      kv_cache_alloc_total_blocks: blocks,
      kv_cache_hit_rate: '0.0',
      arrival_time_ns: String(timing.arrivalNs),
      first_scheduled_time_ns: String(timing.arrivalNs),
      first_token_time_ns: String(timing.firstTokenNs),
      last_token_time_ns: String(timing.lastTokenNs),
      acceptance_rate: '0.0',
      total_accepted_draft_tokens: '0',
      total_draft_tokens: '0',
    };
    return model.outputs
      .filter((spec) => values[spec.name] !== undefined)
      .map((spec) => textTensor(spec.name, [1, 1], [values[spec.name]!]));
  };

  let sentFinal = false;
  const outcome = await generation.run(async (round) => {
    if (!streaming) return 'ok';
    const step = round[0]!;
    if (step.last) {
      seq.reason = step.reason;
      sentFinal = true;
      return sink.send(response(decode(seq.tokens), true, 1));
    }
    return sink.send(response(textSoFar(seq.tokens), false, 1));
  });
  await finishGeneration(outcome, sink, async () => {
    if (sentFinal) return 'ok';
    return sink.send(response(decode(seq.tokens), true, streaming ? 0 : seq.tokens.length));
  });
}
