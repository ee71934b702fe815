/**
 * Triton's generate extension: `/generate` (exactly one response) and `/generate_stream` (SSE).
 * Every top-level key that names a model input becomes that tensor (flat JSON only, batch dimension
 * added); the rest become request parameters. Status codes follow the real server, 500s and all.
 */
import { findTarget, prepareRequest } from '../engine/admit.js';
import type { EngineContext } from '../engine/context.js';
import { execute } from '../engine/execute.js';
import type {
  Delivery,
  InferenceRequest,
  ModelResponse,
  ParameterValue,
  ResponseSink,
} from '../engine/request.js';
import { asTritonError, TritonError } from '../errors.js';
import { MODEL_VERSION, type ModelDef } from '../models/repository.js';
import type { Tensor } from '../tensor.js';
import { withTraceparent } from '../trace-context.js';
import type { Exchange } from './exchange.js';
import { flatData, isObject, parseJsonBody, stringify, tensorJson } from './json.js';
import { unaryFault } from './unary-fault.js';

export const GENERATE_NEEDS_ONE_RESPONSE =
  'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses';

function parameterValue(v: unknown): ParameterValue | undefined {
  return typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string' ? v : undefined;
}

/** The tensors and parameters a generate body stands for; parse problems are 500s, as observed. */
function readBody(
  body: unknown,
  model: ModelDef,
): { id: string; inputs: Tensor[]; parameters: Map<string, ParameterValue> } {
  if (!isObject(body))
    throw new TritonError('INTERNAL', 'failed to parse the request JSON buffer: expected a JSON object');
  const inputs: Tensor[] = [];
  const parameters = new Map<string, ParameterValue>();
  const id = typeof body.id === 'string' ? body.id : '';
  for (const [key, value] of Object.entries(body)) {
    if (key === 'id') continue;
    if (key === 'parameters' && isObject(value)) {
      for (const [name, v] of Object.entries(value)) {
        const p = parameterValue(v);
        if (p !== undefined) parameters.set(name, p);
      }
      continue;
    }
    const spec = model.inputs.find((s) => s.name === key);
    if (!spec) {
      const p = parameterValue(value);
      if (p !== undefined) parameters.set(key, p);
      continue;
    }
    const values = Array.isArray(value) ? value : [value];
    const data = flatData(values, spec.datatype, 'INTERNAL');
    const shape = model.maxBatchSize > 0 ? [1, values.length] : [values.length];
    inputs.push({ name: key, datatype: spec.datatype, shape, data });
  }
  return { id, inputs, parameters };
}

/** One response as a generate event: a one-element output is a scalar, a longer one an array. */
export function generateJson(req: InferenceRequest, r: ModelResponse): string {
  // Written piece by piece: an object through `stringify` costs its bigint replacer on every key.
  let text = req.id !== '' ? `{"id":${JSON.stringify(req.id)},` : '{';
  text += `"model_name":${JSON.stringify(req.model.name)}${VERSION_MEMBER}`;
  const outputs = r.outputs;
  for (let i = 0; i < outputs.length; i++) {
    const t = outputs[i]!;
    text += `${memberPrefix(t.name)}${tensorJson(t)}`;
  }
  return `${text}}`;
}

const VERSION_MEMBER = `,"model_version":${JSON.stringify(MODEL_VERSION)}`;

// `,"name":` for each output name, made once: a model has a few dozen outputs at most.
const prefixes = new Map<string, string>();
function memberPrefix(name: string): string {
  let p = prefixes.get(name);
  if (p === undefined) {
    p = `,${JSON.stringify(name)}:`;
    prefixes.set(name, p);
  }
  return p;
}

export async function handleGenerate(
  ex: Exchange,
  ctx: EngineContext,
  modelName: string,
  version: string,
  streaming: boolean,
): Promise<void> {
  let req: InferenceRequest;
  try {
    const target = findTarget(ctx, modelName, version);
    const parsed = readBody(parseJsonBody(await ex.body(), 'INTERNAL'), target.model);
    const tensors = new Map(parsed.inputs.map((t) => [t.name, t]));
    req = prepareRequest(target, {
      protocol: 'http',
      id: parsed.id,
      headers: parsed.inputs,
      decode: () => tensors,
      parameters: parsed.parameters,
      outputs: [],
    });
  } catch (err) {
    return ex.error(asTritonError(err));
  }
  const sink = streaming ? streamSink(ex, req) : singleSink(ex, req);
  await execute(req, sink, withTraceparent(ctx, ex.req.headers.traceparent), []);
}

/** `/generate_stream`: one `data:` event per response; errors after the first event stay in-band. */
function streamSink(ex: Exchange, req: InferenceRequest): ResponseSink {
  let started = false;
  let delivered = 0;
  const start = () => {
    if (started) return;
    started = true;
    ex.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
    });
  };
  return {
    // Triton notices a vanished client only when it next writes; so does this sink.
    signal: new AbortController().signal,
    async send(r): Promise<Delivery> {
      if (ex.gone) return 'cancelled';
      const fault = req.faults.beforeResponse(delivered, r.tokens);
      if (fault === 'stall') {
        await ex.closed;
        return 'cancelled';
      }
      if (fault === 'drop') {
        await ex.destroy();
        return 'cancelled';
      }
      start();
      if (fault === 'malformed') {
        const event = generateJson(req, r);
        await ex.write(`data: ${event.slice(0, Math.max(1, event.length >> 1))}\n\n`);
        ex.res.end();
        return 'failed';
      }
      delivered += r.tokens;
      return ex.write(`data: ${generateJson(req, r)}\n\n`);
    },
    complete() {
      if (req.faults.omitFinal) return void ex.destroy();
      start();
      ex.res.end();
    },
    fail(error) {
      // Triton 2.51 answers a model's failure before the first event with 400 and an SSE body,
      // whatever the model's error code (a Python model's INTERNAL too): the generate extension has
      // no status of its own for it (issue 53).
      if (!started)
        return ex.send(
          400,
          'text/event-stream; charset=utf-8',
          `data: ${stringify({ error: error.message })}\n\n`,
        );
      void ex.write(`data: ${stringify({ error: error.message })}\n\n`).then(() => ex.res.end());
    },
  };
}

/** `/generate`: the one response, or the error the real server gives a model that sends more. */
function singleSink(ex: Exchange, req: InferenceRequest): ResponseSink {
  const responses: ModelResponse[] = [];
  let delivered = 0;
  // The official BLS answers /generate with more than one response even when not streaming.
  const alwaysSeveral = req.model.kind === 'bls' && req.model.decoupled;
  return {
    signal: new AbortController().signal,
    async send(r): Promise<Delivery> {
      const faulted = await unaryFault(ex, req, delivered, r, () => generateJson(req, r).slice(0, 10));
      if (faulted !== undefined) return faulted;
      delivered += r.tokens;
      responses.push(r);
      return 'ok';
    },
    complete() {
      if (req.faults.omitFinal) return void ex.destroy();
      const only = responses[0];
      if (responses.length !== 1 || alwaysSeveral || !only) {
        return ex.json(200, { error: GENERATE_NEEDS_ONE_RESPONSE });
      }
      ex.send(200, 'application/json', generateJson(req, only));
    },
    fail: (error) => ex.error(error),
  };
}
