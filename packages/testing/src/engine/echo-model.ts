/**
 * `echo`: a decoupled model of no TensorRT-LLM or vLLM flavor, for clients that stream any model by
 * its tensors (`TritonLlm.streamInfer`). It answers each element of `INPUT0` with one response
 * carrying it in `OUTPUT0`, `itl_ms` apart, the last one flagged final; a cancelled request stops at
 * once and is logged `cancelled`.
 */
import { int32Tensor } from '../tensor.js';
import type { EngineContext } from './context.js';
import { intsInput } from './inputs.js';
import { sleep } from './pace.js';
import type { InferenceRequest, ResponseSink } from './request.js';

export async function executeEcho(
  req: InferenceRequest,
  sink: ResponseSink,
  ctx: EngineContext,
): Promise<void> {
  const values = intsInput(req.inputs, 'INPUT0') ?? [];
  const itlMs = Number(req.model.parameters.itl_ms ?? '0');
  let sent = 0;
  const log = (event: 'received' | 'completed' | 'cancelled') =>
    ctx.events.record({ model: req.model.name, id: req.id, event, tokens: sent, protocol: req.protocol });
  log('received');
  const signals = [sink.signal, ctx.activity.signal];
  for (const [i, value] of values.entries()) {
    await sleep(itlMs, signals);
    if (signals.some((s) => s.aborted)) return log('cancelled');
    const final = i === values.length - 1;
    const delivery = await sink.send({
      outputs: [int32Tensor('OUTPUT0', [1, 1], [value])],
      tokens: 1,
      final,
    });
    if (delivery !== 'ok') return log('cancelled');
    sent += 1;
  }
  log('completed');
  sink.complete();
}
