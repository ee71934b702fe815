import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { post, sseEvents, uniqueId, useFake } from './support/fake.js';

const h = useFake();

interface ConfigTensor {
  readonly name: string;
  readonly data_type: string;
  readonly dims: readonly string[] | readonly number[];
}
interface Config {
  readonly input: readonly ConfigTensor[];
  readonly output: readonly ConfigTensor[];
}

const config = (model: string) =>
  fetch(`${h.fake.httpUrl}/v2/models/${model}/config`).then((r) => r.json() as Promise<Config>);
const dims = (t: ConfigTensor | undefined) => t?.dims.map(Number);

/** The text of a generate_stream answer, its events joined. */
async function streamedText(model: string, body: Record<string, unknown>): Promise<string> {
  const res = await post(h.fake, `/v2/models/${model}/generate_stream`, { id: uniqueId('img'), ...body });
  const events = sseEvents(await res.text());
  const error = events.find((e) => 'error' in e);
  if (error !== undefined) throw new Error(String(error.error));
  return events.map((e) => String(e.text_output ?? '')).join('');
}

const hash = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex').slice(0, 8);

describe('the multimodal models of the newest repository', () => {
  // Counts and shapes as NVIDIA/TensorRT-LLM triton_backend/all_models/ declares them.
  it('serves the multimodal ensemble with its 29 inputs and 7 outputs', async () => {
    const c = await config('multimodal');
    expect(c.input).toHaveLength(29);
    expect(c.output.map((t) => t.name)).toEqual([
      'text_output',
      'cum_log_probs',
      'output_log_probs',
      'context_logits',
      'generation_logits',
      'batch_index',
      'sequence_index',
    ]);
    const input = (name: string) => c.input.find((t) => t.name === name);
    expect(input('image_url_input')?.data_type).toBe('TYPE_STRING');
    expect(dims(input('image_url_input'))).toEqual([-1]);
    expect(input('image_sizes_input')?.data_type).toBe('TYPE_INT64');
    expect(dims(input('image_sizes_input'))).toEqual([-1, 2]);
    expect(dims(input('image_bytes_input'))).toEqual([-1, -1, -1, -1]);
  });

  it('serves the disaggregated-serving BLS with its 47 inputs, early_stopping INT32', async () => {
    const c = await config('disaggregated_serving_bls');
    expect(c.input).toHaveLength(47);
    expect(c.output).toHaveLength(20);
    expect(c.input.find((t) => t.name === 'early_stopping')?.data_type).toBe('TYPE_INT32');
    expect(c.input.find((t) => t.name === 'prompt_ignore_length')?.data_type).toBe('TYPE_INT32');
  });

  it('answers an image with its kind, length and hash (a data: URI decoded)', async () => {
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 37) % 256);
    const url = `data:image/jpeg;base64,${Buffer.from(bytes).toString('base64')}`;
    const text = await streamedText('multimodal', {
      text_input: 'Describe.',
      max_tokens: 200,
      stream: true,
      image_url_input: [url, 'https://example.com/a.png'],
    });
    const urlBytes = new TextEncoder().encode('https://example.com/a.png');
    expect(text).toBe(
      `2 images: #1 data 300 bytes ${hash(bytes)}; #2 url ${urlBytes.length} bytes ${hash(urlBytes)}.`,
    );
  });

  it('fails a data: URI other than JPEG through the preprocessing model, as NVIDIA fetches it', async () => {
    const url = `data:image/png;base64,${Buffer.from('png').toString('base64')}`;
    await expect(
      streamedText('tensorrt_llm_bls', { text_input: 'Describe.', max_tokens: 20, image_url_input: url }),
    ).rejects.toThrow(`No connection adapters were found for '${url}'`);
  });

  it('the LLM-API model takes a data: URI of any image type', async () => {
    const bytes = new TextEncoder().encode('not really a png');
    const text = await streamedText('llmapi', {
      text_input: 'Describe.',
      sampling_param_max_tokens: 200,
      streaming: false,
      image_url: [`data:image/png;base64,${Buffer.from(bytes).toString('base64')}`],
    });
    expect(text).toBe(`1 image: #1 data ${bytes.length} bytes ${hash(bytes)}.`);
  });
});
